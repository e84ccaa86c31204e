package main

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/amt-dev/amt/mr"
)

// cmdMRs lists the metamorphic relations, their parameters and the
// built-in action sets.
func cmdMRs(_ context.Context, env *cliEnv, args []string) error {
	fs := newFlagSet(env, "mrs", "[-variants]")
	variants := fs.Bool("variants", false, "also list every variant of each action set, with its flat index")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return fmt.Errorf("mrs: takes no arguments, got %q", fs.Args())
	}
	tw := tabwriter.NewWriter(env.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "Relations (amt transform -mr NAME[:DEG][,...]):")
	fmt.Fprintln(tw, "  NAME\tPARAMETER\tDESCRIPTION")
	for _, in := range mr.Relations() {
		p := "-"
		if in.Parametric {
			p = fmt.Sprintf("degrees in [%v, %v]", in.Min, in.Max)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", in.Name, p, in.Summary)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	w := env.stdout
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Action sets (grids: START:STOP:STEP without 0, or a list of degrees):")
	for _, name := range mr.ActionSetNames() {
		s, err := mr.BuiltinActionSet(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "  %s: %d arms, %d variants\n", s.Name, len(s.Arms), s.NumVariants())
		fmt.Fprintf(w, "    arms: %s\n", describeArms(s))
		if *variants {
			var names []string
			for _, v := range s.Variants() {
				names = append(names, fmt.Sprintf("%d=%s", v.Index, v.Relation.Name()))
			}
			fmt.Fprintf(w, "    variants: %s\n", strings.Join(names, " "))
		}
	}
	return nil
}

// describeArms summarises an action set's arms on one line: a flat set of
// one relation over a grid as "rotation:DEG for DEG in -90:90:5", otherwise
// the arm names, with each sub-bandit's grid in brackets.
func describeArms(s mr.ActionSet) string {
	grid := make([]float64, 0, len(s.Arms))
	for _, a := range s.Arms {
		if len(a.Params) != 1 || a.MR != s.Arms[0].MR || a.Name != fmt.Sprintf("%s:%v", a.MR, a.Params[0]) {
			grid = nil
			break
		}
		grid = append(grid, a.Params[0])
	}
	if len(grid) > 2 {
		return fmt.Sprintf("%s:DEG for DEG in %s", s.Arms[0].MR, mr.FormatGrid(grid))
	}
	parts := make([]string, len(s.Arms))
	for i, a := range s.Arms {
		parts[i] = a.Name
		if len(a.Params) > 1 {
			parts[i] = fmt.Sprintf("%s[%s %s, %d values]", a.Name, a.MR, mr.FormatGrid(a.Params), len(a.Params))
		}
	}
	return strings.Join(parts, ", ")
}
