package nn

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// randomInput returns n CIFAR-sized images of values in [−2, 2).
func randomInput(n int) *tensor.Dense {
	rng := rand.New(rand.NewPCG(7, 8))
	x := make([]float32, n*3*32*32)
	for i := range x {
		x[i] = float32(rng.Float64()*4 - 2)
	}
	return tensor.New(tensor.WithShape(n, 3, 32, 32), tensor.WithBacking(x))
}

func values(t *testing.T, d *tensor.Dense) []float32 {
	t.Helper()
	v, ok := d.Data().([]float32)
	if !ok {
		t.Fatalf("output of type %v", d.Dtype())
	}
	return v
}

// LoadOptions.Outputs returns intermediate tensors, including one that a
// fused kernel would otherwise swallow (the second Conv of a residual
// block, fused with its Add and Relu), without changing the graph output
// computed beside them; nodes after the requested tensors are dropped.
func TestLoadOutputsIntermediate(t *testing.T) {
	path := filepath.Join(sharedpath.ForTest(t, "assets"), "models", "cifar10_resnet56.onnx")
	full, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	const (
		conv = "/layer3/layer3.8/conv2/Conv_output_0" // Conv → Add → Relu, fused unless it is an output
		prev = "/layer3/layer3.7/Relu_1_output_0"     // the block's input (the residual)
		relu = "/layer3/layer3.8/Relu_1_output_0"     // the block's output
		pool = "/GlobalAveragePool_output_0"
	)
	m, err := LoadWith(path, LoadOptions{Outputs: []string{conv, prev, relu, pool, "logits"}})
	if err != nil {
		t.Fatal(err)
	}
	out := m.Outputs()
	wantShapes := [][]int{{-1, 64, 8, 8}, {-1, 64, 8, 8}, {-1, 64, 8, 8}, {-1, 64, 1, 1}, {-1, 10}}
	for k, o := range out {
		if !slices.Equal(o.Shape, wantShapes[k]) {
			t.Errorf("output %d %q has shape %v, want %v", k, o.Name, o.Shape, wantShapes[k])
		}
	}
	const n = 3
	x := randomInput(n)
	res, err := m.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := full.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	// Unfusing Conv → Add → Relu may change the last bits.
	for i, v := range values(t, ref[0]) {
		if got := values(t, res[4])[i]; math.Abs(float64(got-v)) > 1e-5*(1+math.Abs(float64(v))) {
			t.Fatalf("logit %d is %v with intermediate outputs, %v without", i, got, v)
		}
	}
	c, p, r, g := values(t, res[0]), values(t, res[1]), values(t, res[2]), values(t, res[3])
	for i := range r {
		if want := max(c[i]+p[i], 0); math.Abs(float64(r[i]-want)) > 1e-5*(1+math.Abs(float64(want))) {
			t.Fatalf("relu(conv + residual)[%d] = %v, the block's output %v", i, want, r[i])
		}
	}
	for ch := range n * 64 {
		sum := 0.0
		for _, v := range r[ch*64 : (ch+1)*64] {
			sum += float64(v)
		}
		if d := math.Abs(sum/64 - float64(g[ch])); d > 1e-5 {
			t.Fatalf("channel %d: mean %v, pooled %v", ch, sum/64, g[ch])
		}
	}

	early, err := LoadWith(path, LoadOptions{Outputs: []string{prev}})
	if err != nil {
		t.Fatal(err)
	}
	if len(early.p.nodes) >= len(m.p.nodes) || len(m.p.nodes) > len(full.p.nodes) {
		t.Errorf("nodes kept: %d for %s, %d for the logits, %d in the graph", len(early.p.nodes), prev, len(m.p.nodes), len(full.p.nodes))
	}
	e, err := early.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(values(t, e[0]), p) {
		t.Error("a pruned graph computes the tensor differently")
	}
}

// An unknown tensor name is an *UnknownTensorError listing the tensors
// with their shapes; Tensors lists intermediate values (also those a
// fusion hides) and the graph outputs.
func TestLoadOutputsUnknown(t *testing.T) {
	path := filepath.Join(sharedpath.ForTest(t, "assets"), "models", "cifar10_resnet56.onnx")
	_, err := LoadWith(path, LoadOptions{Outputs: []string{"/GlobalAveragePool_output"}})
	var ute *UnknownTensorError
	if !errors.As(err, &ute) || ute.Name != "/GlobalAveragePool_output" {
		t.Fatalf("err = %v, want an UnknownTensorError", err)
	}
	have := map[string][]int{}
	for _, ti := range ute.Tensors {
		have[ti.Name] = ti.Shape
	}
	for name, shape := range map[string][]int{
		"/GlobalAveragePool_output_0":          {-1, 64, 1, 1},
		"/layer3/layer3.8/conv2/Conv_output_0": {-1, 64, 8, 8},
		"/conv1/Conv_output_0":                 {-1, 16, 32, 32},
		"logits":                               {-1, 10},
	} {
		if !slices.Equal(have[name], shape) {
			t.Errorf("tensor %s: listed with shape %v, want %v", name, have[name], shape)
		}
	}
	if _, err := LoadWith(path, LoadOptions{Outputs: []string{"logits", "logits"}}); err == nil {
		t.Error("an output named twice: no error")
	}
}

// Every tensor of every shipped model can be an output: loaded with all of
// them as outputs at once, a run returns each with the shape Tensors
// lists, and the graph outputs among them match the plain model's.
func TestLoadOutputsEveryTensor(t *testing.T) {
	dir := filepath.Join(sharedpath.ForTest(t, "assets"), "models")
	files, err := filepath.Glob(filepath.Join(dir, "*.onnx"))
	if err != nil || len(files) < 5 {
		t.Fatalf("shipped models: %v %v", files, err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			plain, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			ts, err := plain.Tensors()
			if err != nil {
				t.Fatal(err)
			}
			names := make([]string, len(ts))
			for i, ti := range ts {
				names[i] = ti.Name
			}
			m, err := LoadWith(path, LoadOptions{Outputs: names})
			if err != nil {
				t.Fatal(err)
			}
			in := plain.Inputs()[0].Shape
			shape := slices.Clone(in)
			shape[0] = 1
			n := 1
			for _, d := range shape {
				n *= d
			}
			rng := rand.New(rand.NewPCG(1, 2))
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.Float64())
			}
			res, err := m.Run(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			ref, err := plain.Run(tensor.New(tensor.WithShape(shape...), tensor.WithBacking(slices.Clone(x))))
			if err != nil {
				t.Fatal(err)
			}
			for i, ti := range ts {
				want := slices.Clone(ti.Shape)
				if want[0] < 0 {
					want[0] = 1
				}
				if got := res[i].Shape(); !slices.Equal([]int(got), want) {
					t.Errorf("%s: shape %v, Tensors says %v", ti.Name, got, ti.Shape)
				}
			}
			for k, o := range plain.Outputs() {
				i := slices.Index(names, o.Name)
				if i < 0 {
					t.Fatalf("graph output %s not among the tensors", o.Name)
				}
				for j, v := range values(t, ref[k]) {
					if got := values(t, res[i])[j]; math.Abs(float64(got-v)) > 1e-4*(1+math.Abs(float64(v))) {
						t.Fatalf("graph output %s[%d] = %v with every tensor an output, %v without", o.Name, j, got, v)
					}
				}
			}
			t.Logf("%d tensors", len(ts))
		})
	}
}
