package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/atomicfile"
)

// cmdSlurm writes the Slurm job script of an experiment split into shards
// (and submits it with -submit): an array job of N shards, then, once all
// succeeded (afterok), the merge, the agents and the figures.
func cmdSlurm(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "slurm", "-config FILE -shards N [-submit] [-dir DIR] [-- SBATCH OPTIONS…]")
	c := newConfigFlags(fs, "experiment configuration (YAML)", assetsHelp+"; the job exports it")
	shards := fs.Int("shards", 0, "number of shards (array tasks): the sweep's images (replay mode) or the seeds (online mode) are split N ways")
	dir := fs.String("dir", "slurm", "folder of the job script <name>.sbatch and the jobs' logs; like the working folder, it must be on a file system every node shares")
	bin := fs.String("amt", "", "the amt binary the jobs run, on a shared file system (default: this one)")
	submit := fs.Bool("submit", false, "submit the job with sbatch (the array, then the merge job depending on it with afterok)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.config == "" || *shards < 1 {
		return showUsagef(fs, "slurm: want -config FILE and -shards N ≥ 1")
	}
	sbatchOpts, err := sbatchDirectives(fs.Args())
	if err != nil {
		return usageError{err}
	}
	exp, err := c.prepare(ctx, nil)
	if err != nil {
		return err
	}
	cfg := exp.Config
	j := slurmJob{Name: cfg.Name, Shards: *shards, Options: sbatchOpts, Stage: "sweep", Items: exp.Images(), Unit: "images"}
	if cfg.Mode == "online" {
		j.Stage, j.Items, j.Unit = "run", len(cfg.Seeds), "seeds"
	}
	if j.Shards > j.Items {
		return usagef("slurm: -shards %d is more than the %d %s to split", j.Shards, j.Items, j.Unit)
	}
	if j.Shards > 1001 {
		// Slurm's default MaxArraySize is 1001 (indices 0..1000).
		fmt.Fprintf(env.stderr, "amt slurm: warning: %d shards need a MaxArraySize above %d in slurm.conf\n", j.Shards, j.Shards-1)
	}
	abs := func(p string) (string, error) {
		a, err := filepath.Abs(p)
		if err != nil {
			return "", fmt.Errorf("slurm: %w", err)
		}
		return a, nil
	}
	if j.Config, err = abs(c.config); err != nil {
		return err
	}
	if j.Workdir, err = os.Getwd(); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	if j.Dir, err = abs(*dir); err != nil {
		return err
	}
	if *bin == "" {
		if *bin, err = os.Executable(); err != nil {
			return fmt.Errorf("slurm: the amt binary: %w (give -amt PATH)", err)
		}
	}
	if j.Binary, err = abs(*bin); err != nil {
		return err
	}
	if c.assets != "" {
		j.Assets = c.assets
	} else if a, err := data.AssetsDir(); err == nil {
		j.Assets = a
	}
	if j.Assets != "" {
		if j.Assets, err = abs(j.Assets); err != nil {
			return err
		}
	}
	script, err := slurmScript(j)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(j.Dir, 0o755); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	path := j.scriptPath()
	if err := atomicfile.WriteFile(path, []byte(script), 0o755); err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	if !*submit {
		fmt.Fprintf(env.stdout, "%s: job script %s (%d shards of the %s); submit it with amt slurm -submit, or:\n%s", cfg.Name, path, j.Shards, j.Stage, j.submitCommands())
		return nil
	}
	shardJob, err := sbatch(ctx, j.arrayArgs()...)
	if err != nil {
		return err
	}
	mergeJob, err := sbatch(ctx, j.mergeArgs(shardJob)...)
	if err != nil {
		return fmt.Errorf("%w (the shards' array job %s is submitted; cancel it with scancel %s, or submit the merge by hand)", err, shardJob, shardJob)
	}
	fmt.Fprintf(env.stdout, "%s: submitted %s: array job %s (%d %s shards), merge job %s (after every shard succeeded); logs in %s\n",
		cfg.Name, path, shardJob, j.Shards, j.Stage, mergeJob, j.Dir)
	return nil
}

// slurmJob is what the job script of an experiment needs.
type slurmJob struct {
	Name    string   // the experiment's name
	Shards  int      // the array's size
	Stage   string   // "sweep" (replay mode) or "run" (online mode): what is sharded
	Items   int      // the images or seeds split
	Unit    string   // "images" or "seeds"
	Options []string // #SBATCH directives from the command line
	// Absolute paths: the configuration, the working folder (cache and
	// results), the script and log folder, the amt binary and the assets
	// folder ("" to leave it to the nodes).
	Config, Workdir, Dir, Binary, Assets string
}

func (j slurmJob) scriptPath() string { return filepath.Join(j.Dir, j.Name+".sbatch") }

// arrayArgs and mergeArgs are the sbatch arguments that submit the shards
// and the merge job that waits for them.
func (j slurmJob) arrayArgs() []string {
	return []string{"--parsable", fmt.Sprintf("--array=0-%d", j.Shards-1),
		"--output=" + filepath.Join(j.Dir, j.Name+"-%A_%a.out"), j.scriptPath()}
}

func (j slurmJob) mergeArgs(shardJob string) []string {
	return []string{"--parsable", "--dependency=afterok:" + shardJob,
		"--output=" + filepath.Join(j.Dir, j.Name+"-%j-merge.out"), j.scriptPath()}
}

// submitCommands returns the shell commands that submit the job by hand.
func (j slurmJob) submitCommands() string {
	quote := func(args []string) string {
		for k := range args {
			args[k] = shellQuote(args[k])
		}
		return strings.Join(args, " ")
	}
	// "${jid%%;*}": the job id, without the ";cluster" --parsable may add.
	merge := strings.Replace(quote(j.mergeArgs("JOBID")), ":JOBID", `:"${jid%%;*}"`, 1)
	return "  jid=$(sbatch " + quote(j.arrayArgs()) + ")\n  sbatch " + merge + "\n"
}

// slurmScript returns the job script: one file for both steps, telling
// them apart by SLURM_ARRAY_TASK_ID.
func slurmScript(j slurmJob) (string, error) {
	for _, s := range []string{j.Name, j.Config, j.Workdir, j.Dir, j.Binary, j.Assets} {
		if strings.ContainsAny(s, "\n\r\x00") {
			return "", fmt.Errorf("slurm: %q: a path or name with a line break cannot go into a job script", s)
		}
	}
	var b bytes.Buffer
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("#!/bin/bash\n")
	w("# Written by amt slurm: the experiment %s (%s) on a Slurm cluster, its\n", j.Name, j.Config)
	if j.Stage == "sweep" {
		w("# exhaustive sweep split into %d shards of its %d images, then the merge of\n# the sweep, the agents' runs and the figures.\n", j.Shards, j.Items)
	} else {
		w("# agents' online runs split into %d shards of its %d seeds, then the merge\n# of their summaries and the figures.\n", j.Shards, j.Items)
	}
	w("#\n# Submit it (amt slurm -submit does this):\n#\n")
	for _, l := range strings.Split(strings.TrimRight(j.submitCommands(), "\n"), "\n") {
		w("#%s\n", l)
	}
	w(`#
# An array task (SLURM_ARRAY_TASK_ID set) computes one shard; the other job,
# submitted with afterok, runs once every shard succeeded. Shards write only
# their own files, and a finished shard is never recomputed: after a failure,
# resubmit both (only the missing shards compute), or rerun one shard with
# sbatch --array=K and then the merge job.
#
# Every node needs, at the same paths: this script, the amt binary, the
# configuration, the assets, and the working folder, which holds the sweep
# cache and the results; all on a shared file system.
`)
	named := false
	for _, o := range j.Options {
		if o == "-J" || strings.HasPrefix(o, "-J ") || strings.HasPrefix(o, "--job-name") {
			named = true
		}
	}
	if !named {
		w("#SBATCH --job-name=amt-%s\n", j.Name)
	}
	for _, o := range j.Options {
		w("#SBATCH %s\n", o)
	}
	w("set -euo pipefail\n")
	w("cd %s\n", shellQuote(j.Workdir))
	if j.Assets != "" {
		w("export AMT_ASSETS=%s\n", shellQuote(j.Assets))
	}
	w("amt=%s\n", shellQuote(j.Binary))
	w("config=%s\n", shellQuote(j.Config))
	w("# The count is fixed here rather than taken from SLURM_ARRAY_TASK_COUNT, so\n")
	w("# that a rerun of one task (--array=K, a count of 1) is still shard K of %d.\n", j.Shards)
	w("shards=%d\n", j.Shards)
	w("if [ -n \"${SLURM_ARRAY_TASK_ID:-}\" ]; then\n")
	w("\texec \"$amt\" %s -config \"$config\" -shard \"$SLURM_ARRAY_TASK_ID/$shards\"\n", j.Stage)
	w("fi\n")
	if j.Stage == "sweep" {
		w("\"$amt\" sweep -config \"$config\" -merge\n")
		w("\"$amt\" run -config \"$config\"\n")
	} else {
		w("\"$amt\" run -config \"$config\" -merge\n")
	}
	w("\"$amt\" plot -config \"$config\"\n")
	return b.String(), nil
}

// sbatchDirectives groups the command line's sbatch options into #SBATCH
// lines: an argument starting with "-" begins an option, the arguments
// after it up to the next option are its values ("-p short" →
// "#SBATCH -p short").
func sbatchDirectives(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if strings.ContainsAny(a, "\n\r\x00") {
			return nil, fmt.Errorf("slurm: sbatch option %q: a line break cannot go into a job script", a)
		}
		switch {
		case strings.HasPrefix(a, "-"):
			if a == "--array" || strings.HasPrefix(a, "--array=") || a == "-a" || strings.HasPrefix(a, "--dependency") || a == "-d" {
				return nil, fmt.Errorf("slurm: sbatch option %s: amt slurm sets the array and the dependency itself", a)
			}
			out = append(out, a)
		case len(out) == 0:
			return nil, fmt.Errorf("slurm: unexpected argument %q: sbatch options start with -, after -- (amt slurm -config F -shards N -- --partition=short)", a)
		default:
			out[len(out)-1] += " " + a
		}
	}
	return out, nil
}

// sbatch submits a job and returns its id.
func sbatch(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "sbatch", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("slurm: sbatch not found: submit from a machine with Slurm's client commands, or without -submit write the script and submit it there")
		}
		return "", fmt.Errorf("slurm: sbatch %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	// --parsable prints "jobid" or "jobid;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(stdout.String()), ";")
	if id == "" || strings.ContainsAny(id, " \n") {
		return "", fmt.Errorf("slurm: sbatch printed %q, not a job id", stdout.String())
	}
	return id, nil
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:%,+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
