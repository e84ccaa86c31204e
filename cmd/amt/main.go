// Command amt is the adaptive metamorphic testing toolkit's command line.
//
// Usage:
//
//	amt <command> [flags] [arguments]
//
// Run "amt help" for the list of commands and "amt <command> -h" for the
// flags of one. The commands only parse flags and wire packages together;
// everything worth testing lives in the packages.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/amt-dev/amt/internal/suggest"
)

// command is one subcommand of amt.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *cliEnv, args []string) error
}

// cliEnv carries the process's standard streams so commands can be tested.
type cliEnv struct {
	stdout, stderr io.Writer
	// usageShown records that a command printed its usage: the error it
	// returns is a usage error (exit status 2).
	usageShown bool
}

// commands lists every subcommand in the order "amt help" prints them.
func commands() []command {
	return []command{
		{"run", "run an experiment config (adaptive metamorphic testing, online or replay)", cmdRun},
		{"sweep", "compute (or export) the exhaustive verdict table of an experiment", cmdSweep},
		{"check", "metamorphic test gate for model CI: a budgeted session, pass/fail conditions, JUnit and a gallery (exit 0 pass, 1 fail, 2 error)", cmdCheck},
		{"suite", "run an agent benchmark over many systems under test, scenarios and objectives, and compare the agents (ranks, wins, critical differences)", cmdSuite},
		{"gate-power", "measure amt check: false alarms and power over model pairs with a known ground truth, replayed CI cycles", cmdGatePower},
		{"tune", "choose agents' options on tuning seeds, then run them on the evaluation seeds", cmdTune},
		{"slurm", "write (and submit) a Slurm job that shards an experiment over a cluster", cmdSlurm},
		{"replay", "run bandit agents against a precomputed verdict table (seconds, not hours)", cmdReplay},
		{"plot", "redraw an experiment's figures and tables from its saved results", cmdPlot},
		{"ope", "off-policy evaluation of logged bandit decisions", cmdOPE},
		{"infer", "run an ONNX model on raw float32 input and write its outputs", cmdInfer},
		{"transform", "apply metamorphic relations to an image file", cmdTransform},
		{"config", "print the configuration reference (-ref), or check configuration files", cmdConfig},
		{"mrs", "list metamorphic relations, their parameters, the built-in scenarios and rewards", cmdMRs},
		{"data", "fetch or inspect data sets (amt data fetch|inspect)", cmdData},
		{"version", "print amt's version", cmdVersion},
	}
}

// version is amt's release version.
const version = "0.1.0-dev"

func cmdVersion(_ context.Context, env *cliEnv, args []string) error {
	if len(args) > 0 {
		return usagef("version takes no arguments, got %q", args)
	}
	_, err := fmt.Fprintln(env.stdout, "amt", version)
	return err
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "amt: adaptive metamorphic testing with contextual bandits")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Usage: amt <command> [flags] [arguments]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "  help       print this list")
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "amt <command> -h" for a command's flags.`)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Exit status: 0 success, 1 failure, 2 usage or configuration error.")
}

// errUsage marks an error already explained by printed usage.
var errUsage = errors.New("usage")

// dispatch runs the subcommand named by args[0].
func dispatch(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		usage(env.stderr)
		return errUsage
	}
	name := args[0]
	if name == "help" && len(args) > 1 { // amt help run: amt run -h
		return dispatch(ctx, env, []string{args[1], "-h"})
	}
	if name == "help" || name == "-h" || name == "-help" || name == "--help" {
		usage(env.stdout)
		return nil
	}
	for _, c := range commands() {
		if c.name == name {
			err := c.run(ctx, env, args[1:])
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			if err != nil && env.usageShown {
				err = usageError{err}
			}
			return err
		}
	}
	usage(env.stderr)
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
	}
	return usagef("unknown command %q%s", name, suggest.DidYouMean(name, names))
}

// stopGrace is how long amt may take to stop after SIGINT or SIGTERM
// before it exits anyway. Every long loop checks for cancellation between
// images or iterations (a second at most), and every result file is
// written atomically, so exiting then loses nothing written.
const stopGrace = 10 * time.Second

// main runs a command. SIGINT (Ctrl-C) or SIGTERM cancels its context:
// the command stops at its next check, says what it had done and how to
// go on (as "sweep interrupted after 412 of 1017 images (finished images
// are cached; rerun to resume): interrupt signal received"), and amt exits
// with the shell's status for the signal, 128+n (130 for SIGINT, 143 for
// SIGTERM). A second signal, or stopGrace without stopping, ends it at
// once.
func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	caught := make(chan syscall.Signal, 1)
	go func() {
		s, _ := (<-sigs).(syscall.Signal)
		signal.Stop(sigs) // a second signal ends the process at once, the default way
		caught <- s
		cancel(fmt.Errorf("%v signal received", s))
		time.Sleep(stopGrace)
		fmt.Fprintf(os.Stderr, "amt: %v signal received, and still not stopped after %s: exiting\n", s, stopGrace)
		os.Exit(128 + int(s))
	}()
	env := &cliEnv{stdout: os.Stdout, stderr: os.Stderr}
	if err := dispatch(ctx, env, os.Args[1:]); err != nil {
		if !errors.Is(err, errUsage) {
			fmt.Fprintln(os.Stderr, "amt:", err)
		}
		code := exitCode(err)
		select {
		case s := <-caught:
			code = 128 + int(s)
		default:
		}
		os.Exit(code)
	}
}

// newFlagSet returns a flag set for a subcommand that reports errors
// instead of exiting and prints its usage to env.stderr.
func newFlagSet(env *cliEnv, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet("amt "+name, flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		env.usageShown = true
		fmt.Fprintf(env.stderr, "Usage: amt %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
	}
	return fs
}

// showUsagef prints fs's usage and returns an error with the formatted
// message, which dispatch makes a usage error (exit status 2).
func showUsagef(fs *flag.FlagSet, format string, args ...any) error {
	fs.Usage()
	return fmt.Errorf(format, args...)
}
