package nn

import (
	"math"
	"path/filepath"
	"slices"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
	"github.com/amt-dev/amt/nn/kernels"
)

// batchedRun runs inputs op by op on m's graph for their whole batch, the
// path Run takes for graphs that are not separable.
func batchedRun(t *testing.T, m *Model, inputs ...*tensor.Dense) []*tensor.Dense {
	t.Helper()
	inst, err := m.instance(m.p.batchKey(inputs[0].Shape()[0]))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := inst.run(inputs)
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// sameOutputs fails unless got and want have equal shapes and bit-equal
// values.
func sameOutputs(t *testing.T, got, want []*tensor.Dense) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d outputs, want %d", len(got), len(want))
	}
	for k := range got {
		if !slices.Equal(got[k].Shape(), want[k].Shape()) {
			t.Fatalf("output %d: shape %v, want %v", k, got[k].Shape(), want[k].Shape())
		}
		g, w := got[k].Data().([]float32), want[k].Data().([]float32)
		for i := range g {
			if g[i] != w[i] {
				t.Fatalf("output %d: value %d is %v, op by op %v", k, i, g[i], w[i])
			}
		}
	}
}

// TestSeparable checks which graphs Run splits image by image, and that
// every one of them gives the same outputs as running op by op.
func TestSeparable(t *testing.T) {
	conv := ot.F32("w", []int64{2, 2, 1, 1}, 1, -2, 0.5, 3)
	cases := []struct {
		name  string
		opset int64
		nodes []ot.Node
		inits []ot.Tensor
		in    []any // input dims
		want  bool
	}{
		{"conv relu concat softmax", 13, []ot.Node{
			{Name: "c", Op: "Conv", In: []string{"x", "w"}, Out: []string{"a"}},
			{Name: "r", Op: "Relu", In: []string{"a"}, Out: []string{"b"}},
			{Name: "cat", Op: "Concat", In: []string{"a", "b"}, Out: []string{"c"}, Attrs: []ot.Attr{ot.Int("axis", 1)}},
			{Name: "f", Op: "Flatten", In: []string{"c"}, Out: []string{"d"}},
			{Name: "s", Op: "Softmax", In: []string{"d"}, Out: []string{"y"}},
		}, []ot.Tensor{conv}, []any{"N", 2, 1, 3}, true},
		{"conv hardswish", 14, []ot.Node{
			{Name: "c", Op: "Conv", In: []string{"x", "w"}, Out: []string{"a"}},
			{Name: "h", Op: "HardSwish", In: []string{"a"}, Out: []string{"y"}},
		}, []ot.Tensor{conv}, []any{"N", 2, 1, 3}, true},
		{"gemm add constant", 13, []ot.Node{
			{Name: "g", Op: "Gemm", In: []string{"x", "w", "bias"}, Out: []string{"a"}},
			{Name: "add", Op: "Add", In: []string{"a", "k"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.F32("w", []int64{3, 2}, 1, 2, 3, 4, 5, 6), ot.F32("bias", []int64{2}, 1, -1), ot.F32("k", []int64{1, 2}, 7, 8)},
			[]any{"N", 3}, true},
		{"softmax over the batch", 13, []ot.Node{
			{Name: "s", Op: "Softmax", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("axis", 0)}},
		}, nil, []any{"N", 3}, false},
		{"transpose of the batch axis", 13, []ot.Node{
			{Name: "t", Op: "Transpose", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Ints("perm", 1, 0)}},
		}, nil, []any{"N", 3}, false},
		{"reshape across images", 13, []ot.Node{
			{Name: "r", Op: "Reshape", In: []string{"x", "s"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.I64("s", []int64{2}, 3, -1)}, []any{"N", 3}, false},
		{"concat along the batch", 13, []ot.Node{
			{Name: "cat", Op: "Concat", In: []string{"x", "x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("axis", 0)}},
		}, nil, []any{"N", 3}, false},
		{"add of a constant broadcast over the batch", 13, []ot.Node{
			{Name: "add", Op: "Add", In: []string{"x", "k"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.F32("k", []int64{1, 3}, 1, 2, 3)}, []any{"N", 3}, true},
		{"add of a constant with one row per image", 13, []ot.Node{
			{Name: "add", Op: "Add", In: []string{"x", "k"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.F32("k", []int64{6, 1}, 1, 2, 3, 4, 5, 6)}, []any{"N", 3}, false},
		{"reduce within images", 13, []ot.Node{
			{Name: "m", Op: "ReduceMean", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Ints("axes", 1)}},
		}, nil, []any{"N", 3}, true},
		{"reduce over the batch", 13, []ot.Node{
			{Name: "m", Op: "ReduceMean", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Ints("axes", 0)}},
		}, nil, []any{"N", 3}, false},
		{"reduce over everything", 13, []ot.Node{
			{Name: "m", Op: "ReduceSum", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("keepdims", 0)}},
		}, nil, []any{"N", 3}, false},
		{"concat with a constant row per image (expanded class token)", 13, []ot.Node{
			{Name: "sh", Op: "Shape", In: []string{"x"}, Out: []string{"sh"}},
			{Name: "g", Op: "Gather", In: []string{"sh", "zero"}, Out: []string{"n"}},
			{Name: "n1", Op: "Unsqueeze", In: []string{"n", "zero1"}, Out: []string{"n1"}},
			{Name: "shape", Op: "Concat", In: []string{"n1", "rest"}, Out: []string{"shape"}, Attrs: []ot.Attr{ot.Int("axis", 0)}},
			{Name: "e", Op: "Expand", In: []string{"tok", "shape"}, Out: []string{"t"}},
			{Name: "u", Op: "Unsqueeze", In: []string{"x", "one"}, Out: []string{"x3"}},
			{Name: "cat", Op: "Concat", In: []string{"t", "x3"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Int("axis", 1)}},
		}, []ot.Tensor{ot.F32("tok", []int64{1, 1, 3}, 1, 2, 3), ot.I64("one", []int64{1}, 1), ot.I64("zero", nil, 0), ot.I64("zero1", []int64{1}, 0), ot.I64("rest", []int64{2}, 1, 3)}, []any{"N", 3}, true},
		{"slice within images", 13, []ot.Node{
			{Name: "s", Op: "Slice", In: []string{"x", "st", "en", "ax"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.I64("st", []int64{1}, 1), ot.I64("en", []int64{1}, 3), ot.I64("ax", []int64{1}, 1)}, []any{"N", 3}, true},
		{"slice reversing the batch", 13, []ot.Node{
			{Name: "s", Op: "Slice", In: []string{"x", "st", "en", "ax", "step"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.I64("st", []int64{1}, -1), ot.I64("en", []int64{1}, -100), ot.I64("ax", []int64{1}, 0), ot.I64("step", []int64{1}, -1)}, []any{"N", 3}, false},
		{"batched matmul of two run-time values", 13, []ot.Node{
			{Name: "u", Op: "Unsqueeze", In: []string{"x", "two"}, Out: []string{"a"}},
			{Name: "v", Op: "Unsqueeze", In: []string{"x", "one"}, Out: []string{"b"}},
			{Name: "mm", Op: "MatMul", In: []string{"a", "b"}, Out: []string{"y"}},
		}, []ot.Tensor{ot.I64("one", []int64{1}, 1), ot.I64("two", []int64{1}, 2)}, []any{"N", 3}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustLoad(t, ot.Model{Opset: c.opset, Nodes: c.nodes, Inits: c.inits,
				Inputs: []ot.Value{{Name: "x", Dims: c.in}}, Outputs: []ot.Value{{Name: "y"}}})
			if got := m.p.isSeparable(); got != c.want {
				t.Fatalf("separable = %v, want %v", got, c.want)
			}
			shape := []int{6}
			for _, d := range c.in[1:] {
				shape = append(shape, d.(int))
			}
			x := dense(shape, seq(numel(shape), 0.25))
			got, err := m.Run(x)
			if err != nil {
				t.Fatal(err)
			}
			if split := m.insts[6] == nil; split != c.want {
				t.Errorf("Run split the batch: %v, want %v", split, c.want)
			}
			sameOutputs(t, got, batchedRun(t, m.Clone(), x))
		})
	}
}

// TestSplitRunMatchesBatched runs the shipped CNNs on a batch image by
// image (Run) and op by op, which must agree bit for bit.
func TestSplitRunMatchesBatched(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	for _, c := range []struct {
		file string
		n    int
	}{
		{"cifar10_squeezenet1_1.onnx", 3},
		{"cifar10_resnet20.onnx", 5},
	} {
		t.Run(c.file, func(t *testing.T) {
			m, err := Load(filepath.Join(assets, "models", c.file))
			if err != nil {
				t.Fatal(err)
			}
			if !m.p.isSeparable() {
				t.Fatal("not separable: Run would not split its batches")
			}
			shape := slices.Clone(m.Inputs()[0].Shape)
			shape[0] = c.n
			x := randInput(shape, 7)
			for rep := 0; rep < 2; rep++ {
				got, err := m.Run(x)
				if err != nil {
					t.Fatal(err)
				}
				sameOutputs(t, got, batchedRun(t, m.Clone(), x))
			}
		})
	}
}

// TestSplitGroups runs batches through Run and checks every image's
// outputs bit for bit against the image run alone at batch 1, for the
// shipped CNNs and every architecture fixture with a dynamic batch axis:
// separable graphs run in groups of images through a graph for that many
// (splitGroups; here every model is grouped, whatever its weights),
// the others (ViT, Swin: they mix the batch axis into shapes) op by op
// over the whole batch. Among the ops covered: MatMul over all the images'
// rows, LayerNorm, SiLU, GELU, Softmax, attention.
func TestSplitGroups(t *testing.T) {
	defer func(v int64) { splitGroupWeights = v }(splitGroupWeights)
	splitGroupWeights = 0 // every model in groups
	assets := sharedpath.ForTest(t, "assets")
	files := []string{
		filepath.Join(assets, "models", "cifar10_squeezenet1_1.onnx"),
		filepath.Join(assets, "models", "cifar10_resnet20.onnx"),
	}
	arch, err := filepath.Glob(filepath.Join("testdata", "models", "arch", "*.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, arch...)
	w := kernels.Threads()
	n := 4*w + 3 // groups of 2 or more, then single images
	grouped, batched := 0, 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			m, err := Load(f)
			if err != nil {
				t.Fatal(err)
			}
			shape := slices.Clone(m.Inputs()[0].Shape)
			if !m.p.dynamic {
				t.Skip("fixed batch")
			}
			sizes := []int{n} // op by op
			if m.p.isSeparable() {
				if sizes = m.splitGroups(n, w); sizes[0] < 2 {
					t.Fatalf("splitGroups(%d, %d) = %v: the test would not group images", n, w, sizes)
				}
				grouped++
			} else {
				batched++
			}
			shape[0] = n
			x := randInput(shape, 3)
			got, err := m.Run(x)
			if err != nil {
				t.Fatal(err)
			}
			if m.insts[sizes[0]] == nil {
				t.Fatalf("Run did not use a graph for %d images", sizes[0])
			}
			one := m.Clone()
			per := numel(shape[1:])
			shape[0] = 1
			for i := range n {
				xi := tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x.Data().([]float32)[i*per:(i+1)*per]))
				want := batchedRun(t, one, xi)
				for k := range want {
					w := want[k].Data().([]float32)
					g := got[k].Data().([]float32)[i*len(w) : (i+1)*len(w)]
					for j := range w {
						if math.Float32bits(g[j]) != math.Float32bits(w[j]) {
							t.Fatalf("image %d, output %d: value %d is %v in the batch, %v alone", i, k, j, g[j], w[j])
						}
					}
				}
			}
		})
	}
	if grouped < 20 || batched < 10 {
		t.Errorf("%d models ran in groups and %d op by op, want at least 20 and 10", grouped, batched)
	}
}

// TestSplitGroupSizes checks the group sizes of splitRun: the largest
// power of two up to splitGroupMax of which every worker gets a group,
// then 1; only 1 for a model of small weights or of fixed batch 1.
func TestSplitGroupSizes(t *testing.T) {
	dyn := &Model{p: &program{dynamic: true, weights: splitGroupWeights + 1}}
	small := &Model{p: &program{dynamic: true, weights: splitGroupWeights}}
	fixed := &Model{p: &program{splittable: true, weights: splitGroupWeights + 1}}
	for _, c := range []struct {
		m    *Model
		n, w int
		want []int
	}{
		{dyn, 60, 2, []int{8, 1}},
		{dyn, 11, 2, []int{4, 1}},
		{dyn, 7, 2, []int{2, 1}},
		{dyn, 3, 2, []int{1}},
		{dyn, 2, 1, []int{2, 1}},
		{dyn, 1000, 16, []int{8, 1}},
		{dyn, 1, 1, []int{1}},
		{fixed, 60, 2, []int{1}},
		{small, 60, 2, []int{1}},
	} {
		if got := c.m.splitGroups(c.n, c.w); !slices.Equal(got, c.want) {
			t.Errorf("splitGroups(%d, %d), dynamic %v: %v, want %v", c.n, c.w, c.m.p.dynamic, got, c.want)
		}
	}
}
