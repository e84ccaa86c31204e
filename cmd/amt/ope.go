package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/bandit/ope"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/internal/suggest"
)

// opeRow is one line of amt ope's output.
type opeRow struct {
	Agent     string
	Estimates []ope.Estimate
}

// cmdOPE evaluates bandit agents off-policy on a log of decisions.
func cmdOPE(ctx context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "ope", "-log FILE.jsonl [-agents a,b,...] [-agent-opts k=v,...] [flags]\n\n"+
		"Estimates the expected cost per decision of each agent from logged decisions\n"+
		"(JSON lines {\"context\":[...],\"arm\":K,\"prob\":P,\"cost\":C}, arms 0-based; amt run\n"+
		"-log-decisions writes them, an arm being a follow-up of the scenario) with\n"+
		"IPS, SNIPS and DR and normal-approximation confidence intervals. Each agent is\n"+
		"scored on every record before it learns from that record (progressive\n"+
		"validation); \"logged\" is the logging policy's own mean cost. Agents: uniform,\n"+
		"greedy (epsilon-greedy with epsilon 0) and "+strings.Join(bandit.Agents()[1:], ", ")+".")
	logPath := fs.String("log", "", "log file (JSON lines)")
	agents := fs.String("agents", "uniform,greedy,cover", "comma-separated agents to evaluate")
	agentOpts := fs.String("agent-opts", "", "agent options k=v,...; each applies to every listed agent that has the key")
	arms := fs.Int("arms", 0, "number of arms K (0 = 1 + the largest logged arm)")
	seed := fs.Uint64("seed", 1, "seed of the agents' and the cost model's internal randomness")
	level := fs.Float64("level", 0.95, "confidence level of the intervals")
	noLearn := fs.Bool("no-learn", false, "evaluate the agents' initial policies without learning from the log")
	modelHidden := fs.Int("model-hidden", 0, "hidden units of DR's cost model (0 = linear)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return showUsagef(fs, "ope: unexpected arguments %q", fs.Args())
	}
	if *logPath == "" {
		return showUsagef(fs, "ope: -log is required")
	}
	if !(*level > 0 && *level < 1) {
		return usagef("ope: -level %v, want 0 < level < 1", *level)
	}
	if *modelHidden < 0 || *modelHidden > limits.Hidden {
		return usagef("ope: -model-hidden %d, want 0 to %d", *modelHidden, limits.Hidden)
	}
	if *arms < 0 || *arms > limits.Arms {
		return usagef("ope: -arms %d, want 0 (from the log) to %d", *arms, limits.Arms)
	}
	opts, err := bandit.ParseOptions(*agentOpts)
	if err != nil {
		return usagef("ope: -agent-opts: %w", err)
	}
	names := strings.Split(*agents, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	f, err := limits.Open(*logPath)
	if err != nil {
		return fmt.Errorf("ope: %w", err)
	}
	log, err := ope.ReadJSONL(f)
	f.Close()
	if err != nil {
		return fmt.Errorf("ope: %s: %w", *logPath, err)
	}
	k := *arms
	maxArm := 0
	for _, r := range log {
		maxArm = max(maxArm, r.Arm)
	}
	if k == 0 {
		k = maxArm + 1
	}
	if maxArm >= k {
		return fmt.Errorf("ope: %s logs arm %d but -arms is %d", *logPath, maxArm, k)
	}
	dim := len(log[0].Context)
	policies, err := opePolicies(names, opts, k, dim, *seed)
	if err != nil {
		return fmt.Errorf("ope: %w", err)
	}
	rows := []opeRow{{Agent: "logged", Estimates: []ope.Estimate{loggedEstimate(log, *level)}}}
	for i, p := range policies {
		res, err := ope.Evaluate(ctx, log, p, ope.Options{Arms: k, Level: *level, Learn: !*noLearn, ModelHidden: *modelHidden, Seed: *seed})
		if err != nil {
			return fmt.Errorf("ope: agent %s: %w", names[i], err)
		}
		rows = append(rows, opeRow{Agent: names[i], Estimates: []ope.Estimate{res.IPS, res.SNIPS, res.DR}})
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"log": *logPath, "records": len(log), "arms": k, "level": *level, "results": jsonSafe(rows)})
	}
	fmt.Fprintf(env.stdout, "%d records, %d arms, context dimension %d; expected cost per decision, %g%% intervals\n",
		len(log), k, dim, 100**level)
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tESTIMATOR\tVALUE\tLO\tHI\tSTDERR\tESS")
	for _, r := range rows {
		for _, e := range r.Estimates {
			fmt.Fprintf(tw, "%s\t%s\t%.4f\t%.4f\t%.4f\t%.4f\t%.0f\n", r.Agent, e.Estimator, e.Value, e.Lo, e.Hi, e.StdErr, e.ESS)
		}
	}
	return tw.Flush()
}

// opePolicies builds the named policies; every option must be accepted by
// at least one of them and applies to each that has it.
func opePolicies(names []string, opts bandit.Options, k, dim int, seed uint64) ([]bandit.Policy, error) {
	used := map[string]bool{}
	var ps []bandit.Policy
	for _, name := range names {
		agent := name
		switch name {
		case "uniform":
			agent = "random"
		case "greedy":
			agent = "epsilon-greedy"
		}
		if !slices.Contains(bandit.Agents(), agent) {
			known := append([]string{"uniform", "greedy"}, bandit.Agents()[1:]...)
			return nil, fmt.Errorf("-agents: unknown agent %q%s (known: %s)", name, suggest.DidYouMean(name, known), strings.Join(known, ", "))
		}
		mine := bandit.Options{}
		for key, v := range opts {
			if slices.Contains(bandit.Keys(agent), key) && !(name == "greedy" && key == "epsilon") {
				mine[key] = v
				used[key] = true
			}
		}
		cfg, err := bandit.Resolve(agent, mine)
		if err != nil {
			return nil, err
		}
		if name == "greedy" {
			cfg.Epsilon = 0
		}
		p, err := bandit.NewPolicy(agent, k, dim, cfg, seed)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
	}
	for key := range opts {
		if !used[key] {
			return nil, fmt.Errorf("-agent-opts: no listed agent has option %q", key)
		}
	}
	return ps, nil
}

// loggedEstimate is the logging policy's own mean cost.
func loggedEstimate(log []ope.Record, level float64) ope.Estimate {
	n := float64(len(log))
	mean := 0.0
	for _, r := range log {
		mean += r.Cost / n
	}
	ss := 0.0
	for _, r := range log {
		ss += (r.Cost - mean) * (r.Cost - mean)
	}
	se := 0.0
	if len(log) > 1 {
		se = math.Sqrt(ss / (n - 1) / n)
	}
	z := math.Sqrt2 * math.Erfinv(level)
	return ope.Estimate{Estimator: "on-policy", Value: mean, StdErr: se, Lo: mean - z*se, Hi: mean + z*se, N: len(log), ESS: n}
}

// jsonSafe replaces non-finite numbers (SNIPS without overlap) by nil so
// the result encodes as JSON.
func jsonSafe(rows []opeRow) []map[string]any {
	var out []map[string]any
	num := func(v float64) any {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return v
	}
	for _, r := range rows {
		var es []map[string]any
		for _, e := range r.Estimates {
			es = append(es, map[string]any{"estimator": e.Estimator, "value": num(e.Value), "lo": num(e.Lo),
				"hi": num(e.Hi), "stderr": num(e.StdErr), "n": e.N, "ess": num(e.ESS)})
		}
		out = append(out, map[string]any{"agent": r.Agent, "estimates": es})
	}
	return out
}
