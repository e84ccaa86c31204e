package nn

import (
	"slices"
	"testing"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

func TestInspect(t *testing.T) {
	m := ot.Model{Opset: 16,
		Nodes: []ot.Node{
			{Name: "r1", Op: "Relu", In: []string{"x"}, Out: []string{"a"}},
			{Name: "", Op: "GridSample", In: []string{"a", "g"}, Out: []string{"b"}},
			{Name: "f", Op: "FusedConv", Domain: "com.microsoft", In: []string{"b"}, Out: []string{"c"}},
			{Name: "r2", Op: "Relu", In: []string{"c"}, Out: []string{"y"}},
		},
		Inits:   []ot.Tensor{ot.F32("g", []int64{1, 2, 2, 2}, 0, 0, 0, 0, 0, 0, 0, 0)},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 1, 2, 2}}, {Name: "g", Dims: []any{1, 2, 2, 2}}},
		Outputs: []ot.Value{{Name: "y", Dims: []any{"N", 1, 2, 2}}},
	}
	mi, err := InspectBytes(m.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	want := []OpUse{
		{Op: "Relu", Count: 2, FirstNode: "r1", Supported: true},
		{Op: "GridSample", Count: 1, FirstNode: "#1"},
		{Op: "FusedConv", Domain: "com.microsoft", Count: 1, FirstNode: "f"},
	}
	if !slices.Equal(mi.Ops, want) {
		t.Errorf("Ops = %+v, want %+v", mi.Ops, want)
	}
	if got := mi.Unsupported(); len(got) != 2 || got[0].Op != "GridSample" || got[1].Op != "FusedConv" {
		t.Errorf("Unsupported() = %+v", got)
	}
	if mi.Opset != 16 || mi.Nodes != 4 || len(mi.Inputs) != 1 || mi.Inputs[0].Name != "x" || !slices.Equal(mi.Inputs[0].Shape, []int{-1, 1, 2, 2}) ||
		len(mi.Outputs) != 1 || !slices.Equal(mi.Outputs[0].Shape, []int{-1, 1, 2, 2}) {
		t.Errorf("ModelInfo = %+v", mi)
	}
	if _, err := InspectBytes([]byte{0xff, 0xff}); err == nil {
		t.Error("no error for a malformed file")
	}
}
