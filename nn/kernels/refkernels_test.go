//go:build refkernels

package kernels

import "testing"

// TestRefKernelsSelected checks that a refkernels build runs convolutions
// with the naive reference implementation (the baseline of the before/after
// measurements), whatever the shape.
func TestRefKernelsSelected(t *testing.T) {
	for _, ms := range modelShapes {
		c, err := NewConv(ms.s, make([]float32, ms.s.OutC*ms.s.InC/ms.s.Groups*ms.s.KH*ms.s.KW), nil, Activation{})
		if err != nil {
			t.Fatal(err)
		}
		if c.Strategy() != "reference" {
			t.Errorf("%s: strategy %s in a refkernels build, want reference", ms.name, c.Strategy())
		}
	}
}
