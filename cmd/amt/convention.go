package main

import (
	"fmt"
	"io"

	"github.com/amt-dev/amt/experiments"
	"github.com/amt-dev/amt/nn"
)

// printConvention writes, for amt infer -check, the input convention amt
// infers from an image classifier's input shape (one input of rank 4, a
// first output [N, classes]) and a configuration snippet of its sut
// section; other models get nothing.
func printConvention(w io.Writer, path string, mi *nn.ModelInfo) {
	if len(mi.Inputs) != 1 || len(mi.Outputs) == 0 || len(mi.Outputs[0].Shape) != 2 {
		return
	}
	d, err := experiments.DetectSUT(mi.Inputs[0].Shape)
	if err != nil {
		fmt.Fprintf(w, "\nnot an image classifier amt can feed: %v\n", err)
		return
	}
	fmt.Fprintf(w, "\ninput convention: %s\n", d.Summary())
	fmt.Fprintf(w, "config snippet (amt check -model %s -images DIR uses it as is):\n\n%s", path, d.SUTYAML(path))
}
