package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots"
)

// Exit statuses of amt check (and, for 0 and 1, of every other command:
// they exit 1 on any error).
const (
	exitPass  = 0 // the check passed
	exitFail  = 1 // the check ran and a condition failed
	exitError = 2 // no decision: bad flags or configuration, unreadable model, data or baseline
)

// exitStatusError is an error that sets the process's exit status.
type exitStatusError struct {
	code int
	err  error
}

func (e *exitStatusError) Error() string { return e.err.Error() }
func (e *exitStatusError) Unwrap() error { return e.err }

// errCheckFailed is the error of a check whose verdict is fail.
var errCheckFailed = errors.New("check failed")

const checkSynopsis = `-config FILE [-budget N] [-time D] [-baseline DIR] [-audit S] [-out DIR] [flags]
       amt check -model M.onnx -images DIR [-labels FILE] [-budget N] [flags]

amt check is a metamorphic test gate for model CI: one testing session on
the model (online: the model runs), with a budget, continuing from the
agent state a previous check saved (state, or OUT/state) and saving it
again; then the conditions of check.fail_on and, with a baseline, the
regression conditions. It writes the usual result files and check.json,
summary.md (verdict first, for a CI job summary), junit.xml (a suite per MR,
a case per MR and parameter value) and gallery/ (contact sheets of violating
cases) into OUT.

The decision rule. A share check.audit (-audit, default 1) of the budget is
the audit sample: follow-ups drawn uniformly (a uniform MR, then a uniform
parameter value) on a schedule fixed in advance, whatever the images and
the verdicts; the configured agent chooses the others (none at the
default). Absolute conditions: a violation rate over all follow-ups above
its limit fails. Regression conditions (with -baseline, a check with an
audit sample): for each MR, the audit follow-ups of this check and of the
baseline form one 2×2 table per parameter value; the MR fails when its
Mantel–Haenszel rise (this check minus the baseline) exceeds
check.regression.margin (-margin, percentage points) and the one-sided exact
stratified test of a rise (exact Cochran–Mantel–Haenszel; Fisher's for an
MR without a parameter), Holm-adjusted over the MRs, has p ≤
check.regression.alpha (-alpha). Only audit samples enter the test: an
agent seeks violations where it expects them, so its own follow-ups of two
checks are no sample of one population; comparing them missed lost
robustness and blamed the wrong MRs in the gate power study
(results/gate-power), where uniform follow-ups needed the fewest model runs.

Without a configuration (-model and -images) it checks an ONNX image
classifier on a folder of images with the input convention its input
shape says, the hierarchical scenario and the recommended agent (hts),
and first writes the complete configuration it uses to OUT/config.yaml
(OUT defaults to results/check-<model name>): amt check -config
OUT/config.yaml runs it again.

Exit status: 0 the check passed, 1 a condition failed, 2 an error (bad
flags or configuration, unreadable model, data or baseline: no decision).`

// cmdCheck runs amt check. Its errors carry exit status 2, a failing
// verdict exit status 1.
func cmdCheck(ctx context.Context, env *cliEnv, args []string) error {
	err := runCheck(ctx, env, args)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp), errors.Is(err, errCheckFailed):
		return err
	}
	return &exitStatusError{code: exitError, err: err}
}

// mrLimits is the value of -fail-mr: relation=rate pairs, repeatable or
// separated by commas.
type mrLimits map[string]float64

func (m mrLimits) String() string {
	var s []string
	for k, v := range m {
		s = append(s, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
	}
	return strings.Join(s, ",")
}

func (m mrLimits) Set(v string) error {
	for _, kv := range strings.Split(v, ",") {
		k, r, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		f, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if !ok || k == "" || err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%q: want MR=RATE with a rate in [0, 1], e.g. flipud=0.6", kv)
		}
		m[k] = f
	}
	return nil
}

// rateFlag is an optional rate in [0, 1].
type rateFlag struct{ v *float64 }

func (r *rateFlag) String() string {
	if r.v == nil {
		return ""
	}
	return strconv.FormatFloat(*r.v, 'g', -1, 64)
}

func (r *rateFlag) Set(s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f >= 0 && f <= 1) {
		return fmt.Errorf("%q: want a rate in [0, 1], e.g. 0.3", s)
	}
	r.v = &f
	return nil
}

func runCheck(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "check", checkSynopsis)
	c := newConfigFlags(fs, "experiment configuration (YAML); its check section configures the gate", assetsHelp)
	c.declareOut()
	budget := fs.Int("budget", -1, "iterations of the session (default: check.budget)")
	timeBudget := fs.Duration("time", 0, "wall-clock budget, e.g. 45s (default: check.time); the session ends after the iteration during which it ran out")
	baseline := fs.String("baseline", "", "results folder of a previous check (with an audit sample): fail MRs whose audit violation rate rose significantly (default: check.baseline)")
	state := fs.String("state", "", "agent state folder (default: state, else OUT/state)")
	agent := fs.String("agent", "", "id of the agent that tests (default: check.agent)")
	var failRate rateFlag
	fs.Var(&failRate, "fail-rate", "fail when the overall violation rate exceeds this (default: check.fail_on.violation_rate)")
	failMR := mrLimits{}
	fs.Var(failMR, "fail-mr", "fail when an MR's violation rate exceeds its limit: MR=RATE[,MR=RATE] (added to check.fail_on.mr)")
	margin := fs.Float64("margin", -1, "tolerated rise of an MR's violation rate over the baseline, in percentage points (default: check.regression.margin)")
	alpha := fs.Float64("alpha", 0, "significance level of the regression tests after Holm's adjustment (default: check.regression.alpha)")
	audit := fs.Float64("audit", -1, "share of the budget spent on the uniform audit sample the regression test compares, in [0, 1] (default: check.audit)")
	replay := fs.Bool("replay", false, "answer from the cached exhaustive sweep instead of running the model (for trying conditions on known tables)")
	mc := modelCheck{model: fs.String("model", "", "without -config: the ONNX image classifier `file` to check (its input convention inferred from its input shape; see checkmodel.go)"),
		images: fs.String("images", "", "without -config: the `folder` of PNG/JPEG images to test on"),
		labels: fs.String("labels", "", "without -config: a `file` naming the model's classes, one per line (sut.labels)")}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (c.config == "") == !mc.active() || fs.NArg() > 0 {
		return showUsagef(fs, "check: want -config FILE, or -model M.onnx -images DIR, and no arguments")
	}
	// Each flag given is checked on its own, so that the message names
	// the wrong one; a value given explicitly is never ignored (-alpha 0
	// is an error, not the configuration's level).
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["budget"] && *budget < 0:
		return usagef("check: -budget %d, want an iteration count >= 0", *budget)
	case set["time"] && *timeBudget <= 0:
		return usagef("check: -time %v, want a duration > 0", *timeBudget)
	case set["margin"] && !(*margin >= 0 && *margin <= 100):
		return usagef("check: -margin %v, want percentage points in [0, 100]", *margin)
	case set["alpha"] && !(*alpha > 0 && *alpha < 1):
		return usagef("check: -alpha %v, want a significance level in (0, 1)", *alpha)
	case set["audit"] && !(*audit >= 0 && *audit <= 1):
		return usagef("check: -audit %v, want a share of the budget in [0, 1]", *audit)
	}
	if mc.active() {
		var err error
		if c.config, err = mc.writeConfig(env, c.assets, c.out, *budget, *timeBudget, failRate.v, failMR, *baseline, *margin, *alpha); err != nil {
			return err
		}
	}
	cfg, err := c.load()
	if err != nil {
		return err
	}
	cc := &cfg.Check
	if *budget >= 0 {
		cc.Budget = *budget
	}
	if *timeBudget > 0 {
		cc.Time = *timeBudget
	}
	if *baseline != "" {
		cc.Baseline = *baseline
	}
	if *state != "" {
		cfg.State = *state
	}
	if *agent != "" {
		cc.Agent = *agent
	}
	if failRate.v != nil {
		cc.FailRate = failRate.v
	}
	if len(failMR) > 0 {
		mrs := cfg.Scenario.Actions()
		for k := range failMR {
			if !slices.Contains(mrs, k) {
				return fmt.Errorf("check: -fail-mr: %q is not a relation of the action set %s (%s)", k, cfg.Scenario.Name, strings.Join(mrs, ", "))
			}
		}
		m := map[string]float64{}
		for k, v := range cc.FailMR {
			m[k] = v
		}
		for k, v := range failMR {
			m[k] = v
		}
		cc.FailMR = m
	}
	if set["margin"] {
		cc.Margin = *margin
	}
	if set["alpha"] {
		cc.Alpha = *alpha
	}
	if *audit >= 0 {
		cc.Audit = *audit
	}
	exp, err := experiments.Prepare(ctx, cfg)
	if err != nil {
		return err
	}
	exp.NoteSkipped(env.stderr)
	if err := exp.WarnConvention(ctx, env.stderr); err != nil {
		return err
	}
	p := experiments.NewProgress(env.stderr)
	start := time.Now()
	res, err := exp.Check(ctx, env.stderr, p.Report, experiments.CheckOptions{Replay: *replay})
	p.Done()
	if err != nil {
		return err
	}
	summary, junit, err := plots.WriteCheckReports(cfg.Output)
	if err != nil {
		return err
	}
	state2 := ""
	if res.State != nil {
		state2 = "new agent state"
		if res.State.Loaded {
			state2 = "continued agent state"
		}
		state2 = fmt.Sprintf(", %s %s", state2, res.State.Path)
	}
	verdict := strings.ToUpper(res.Verdict)
	fmt.Fprintf(env.stdout, "%s: %s: %d violations in %d follow-ups (%s)%s\n", cfg.Name, verdict, res.Violations, res.Iterations,
		time.Since(start).Round(100*time.Millisecond), state2)
	for _, c := range res.Conditions {
		if c.Status == record.StatusFail {
			fmt.Fprintf(env.stdout, "  failed: %s\n", c.Message)
		}
	}
	fmt.Fprintf(env.stdout, "%s: reports %s, %s\n", cfg.Name, summary, junit)
	if res.Verdict == record.VerdictFail {
		return fmt.Errorf("%s: %w (see %s)", cfg.Name, errCheckFailed, summary)
	}
	return nil
}
