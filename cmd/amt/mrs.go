package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// cmdMRs lists the metamorphic relations of mr's registry, their
// parameters and the built-in scenarios.
func cmdMRs(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "mrs", "[-variants]")
	variants := fs.Bool("variants", false, "also list every variant of each scenario, with its flat index")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return showUsagef(fs, "mrs: takes no arguments, got %q", fs.Args())
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Relations (amt transform -mr NAME[:VALUE][,...]; action_set arms: mr: NAME, params: GRID):")
	fmt.Fprintln(tw, "  NAME\tPARAMETER\tDESCRIPTION")
	for _, in := range mr.Relations() {
		name, p := in.Name, "-"
		if in.Parametric() {
			name += ":" + in.Param.Symbol
			p = fmt.Sprintf("%s, halving reward every %v %s", in.Param.Describe(), in.Param.Scale, in.Param.Unit)
		}
		switch {
		case in.Corruption:
			p += " (in the corruptions scenarios)"
		case !in.Paper:
			p += " (not in the paper's scenarios)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", name, p, in.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	w := env.stdout
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Built-in scenarios (action_set: NAME; grids: START:STOP:STEP without 0, or a list of values):")
	for _, name := range mr.BuiltinNames() {
		s, err := mr.Builtin(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s: %d arms, %d variants, reward %s: %s\n", s.Name, len(s.Arms), len(s.Variants()), s.Objective.Name, mr.BuiltinDoc(name))
		fmt.Fprintf(w, "    arms: %s\n", describeArms(s))
		if *variants {
			var names []string
			for _, v := range s.Variants() {
				names = append(names, fmt.Sprintf("%d=%s", v.Index, v.Key()))
			}
			fmt.Fprintf(w, "    variants: %s\n", strings.Join(names, " "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Rewards (action_set: {reward: NAME, ...}):")
	for _, o := range scenario.Objectives() {
		fmt.Fprintf(w, "  %s: %s\n", o.Name, o.Doc)
	}
	return nil
}

// describeArms summarises a scenario's arms on one line: a flat scenario
// of one relation over a grid as "rotation:DEG for DEG in -90:90:5",
// otherwise the arm names, with each parameter bandit's grid in brackets.
func describeArms(s scenario.Scenario) string {
	grid := make([]float64, 0, len(s.Arms))
	for _, a := range s.Arms {
		if len(a.Values) != 1 || a.Action != s.Arms[0].Action || a.Name != scenario.Key(a.Action, a.Values[0]) {
			grid = nil
			break
		}
		grid = append(grid, a.Values[0])
	}
	if len(grid) > 2 {
		sym := s.Arms[0].Param.Symbol
		return fmt.Sprintf("%s:%s for %s in %s", s.Arms[0].Action, sym, sym, scenario.FormatGrid(grid))
	}
	parts := make([]string, len(s.Arms))
	for i, a := range s.Arms {
		parts[i] = a.Name
		if a.Hierarchical() {
			parts[i] = fmt.Sprintf("%s[%s %s, %d values]", a.Name, a.Action, scenario.FormatGrid(a.Values), len(a.Values))
		}
	}
	return strings.Join(parts, ", ")
}
