package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/amt-dev/amt/nn"
)

// checkModel implements amt infer -check: it prints what the model file
// declares (opset, inputs, outputs), each operator type it uses with its
// number of nodes, first node and whether amt implements it, then loads
// the model and prints the memory planned for a batch of batch images (1
// when 0; see nn.Model.PlannedBytes), loading it with at most maxBytes (the
// -max-memory of amt infer). It fails, after printing, when the model uses
// an operator amt does not implement or does not load. For an image
// classifier it ends with the input convention inferred from its input
// shape and a configuration snippet (printConvention).
func checkModel(env *cliEnv, path string, batch int, maxBytes int64) error {
	if batch < 0 {
		return fmt.Errorf("infer -check: -batch %d: must be ≥ 0", batch)
	}
	batch = max(batch, 1)
	mi, err := nn.Inspect(path)
	if err != nil {
		return fmt.Errorf("infer -check: %w", err)
	}
	w := env.stdout
	fmt.Fprintf(w, "%s: opset %d, %d nodes, %d operator types\n", path, mi.Opset, mi.Nodes, len(mi.Ops))
	for _, v := range mi.Inputs {
		fmt.Fprintf(w, "input  %s %s\n", v.Name, dimsString(v.Shape))
	}
	for _, v := range mi.Outputs {
		fmt.Fprintf(w, "output %s %s\n", v.Name, dimsString(v.Shape))
	}
	ops := slices.Clone(mi.Ops)
	slices.SortFunc(ops, func(a, b nn.OpUse) int { return strings.Compare(opName(a), opName(b)) })
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\noperator\tnodes\tfirst node\tsupported")
	for _, u := range ops {
		sup := "yes"
		if !u.Supported {
			sup = "NO"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", opName(u), u.Count, u.FirstNode, sup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if bad := mi.Unsupported(); len(bad) > 0 {
		names := make([]string, len(bad))
		for k, u := range bad {
			names[k] = opName(u)
		}
		fmt.Fprintf(w, "\n%d of %d operator types not supported: %s\n", len(bad), len(mi.Ops), strings.Join(names, ", "))
		return fmt.Errorf("infer -check: %s uses operators amt does not implement (opset %d): %s", path, mi.Opset, strings.Join(names, ", "))
	}
	fmt.Fprintf(w, "\nall %d operator types supported\n", len(mi.Ops))
	m, err := nn.LoadWith(path, nn.LoadOptions{MaxBytes: maxBytes, Batch: batch})
	if err != nil {
		return fmt.Errorf("infer -check: %w", err)
	}
	planned, err := m.PlannedBytes(batch)
	if err != nil {
		return fmt.Errorf("infer -check: batch %d: %w", batch, err)
	}
	fmt.Fprintf(w, "planned memory for a batch of %d: %s (weights, activations, inputs and outputs)\n", batch, humanBytes(planned))
	printConvention(w, path, mi)
	return nil
}

// opName is an operator type, prefixed with its domain when that is not
// the default one.
func opName(u nn.OpUse) string {
	if u.Domain != "" {
		return u.Domain + "." + u.Op
	}
	return u.Op
}

// dimsString writes a shape with "?" for a dynamic dimension.
func dimsString(s []int) string {
	if s == nil {
		return "(shape not declared)"
	}
	parts := make([]string, len(s))
	for k, d := range s {
		if d < 0 {
			parts[k] = "?"
		} else {
			parts[k] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// humanBytes writes a byte count in B, KiB or MiB.
func humanBytes(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
