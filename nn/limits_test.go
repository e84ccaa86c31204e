package nn

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// reluModel is Relu over x [N,3,4,4].
var reluModel = ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
	Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 3, 4, 4}}}, Outputs: []ot.Value{{Name: "y"}}}

// TestPlannedBytes checks the memory plan of Relu over [N,3,4,4] (48
// values an image): one activation buffer, the inputs and outputs; image
// by image from batch 2 on (the graph is separable), with one graph per
// worker and group size (splitGroups).
func TestPlannedBytes(t *testing.T) {
	defer func(v int64) { splitGroupWeights = v }(splitGroupWeights)
	splitGroupWeights = -1 // groups despite its lack of weights
	m := mustLoad(t, reluModel)
	const img = 4 * 48 // bytes of one image's input, output or activation
	got, err := m.PlannedBytes(1)
	if err != nil || got != 3*img {
		t.Errorf("batch 1: %d, %v; want %d (buffer, input, output)", got, err, 3*img)
	}
	w := min(runtime.GOMAXPROCS(0), 10)
	sizes, graphs := m.splitGroups(10, w), 0
	for _, g := range sizes {
		graphs += g
	}
	// The workers' buffers (a graph per group size), the batch's inputs and
	// outputs, the workers' copies of their largest groups' outputs, their
	// graphs' own inputs.
	want := int64(w*graphs)*img + 10*2*img + int64(w*sizes[0])*img + int64(w*graphs)*img
	if got, err := m.PlannedBytes(10); err != nil || got != want {
		t.Errorf("batch 10: %d, %v; want %d", got, err, want)
	}
	if _, err := m.PlannedBytes(0); err == nil {
		t.Error("batch 0: no error")
	}
	if got, err := m.PlannedBytes(math.MaxInt); err != nil || got != math.MaxInt64 {
		t.Errorf("batch MaxInt: %d, %v; want saturation at MaxInt64", got, err)
	}

	// A model of fixed batch 2 (not 1) runs only that batch.
	fixed := reluModel
	fixed.Inputs = []ot.Value{{Name: "x", Dims: []any{2, 3, 4, 4}}}
	f := mustLoad(t, fixed)
	if got, err := f.PlannedBytes(2); err != nil || got != 3*2*img {
		t.Errorf("fixed batch 2: %d, %v; want %d", got, err, 3*2*img)
	}
	if _, err := f.PlannedBytes(3); err == nil || !strings.Contains(err.Error(), "fixed batch of 2") {
		t.Errorf("fixed batch 2, planned for 3: %v", err)
	}
}

// TestLoadOptionsLimits checks that the limits of LoadOptions are applied
// at load time (for the batch asked) and by Run, with errors that are
// *ModelError (at load) and ErrLimit.
func TestLoadOptionsLimits(t *testing.T) {
	b := reluModel.Bytes()
	const img = 4 * 48
	if _, err := LoadBytesWith(b, "m.onnx", LoadOptions{MaxBytes: 3 * img}); err != nil {
		t.Errorf("batch 1 within %d bytes: %v", 3*img, err)
	}
	_, err := LoadBytesWith(b, "m.onnx", LoadOptions{MaxBytes: 3*img - 1})
	var me *ModelError
	if !errors.As(err, &me) || !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "invalid model m.onnx: a batch of 1 needs 576 B") {
		t.Errorf("batch 1 over the limit: %v", err)
	}
	_, err = LoadBytesWith(b, "m.onnx", LoadOptions{MaxBytes: 1 << 20, Batch: 10000})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "a batch of 10000 needs") {
		t.Errorf("batch 10000 over the limit: %v", err)
	}

	// Run refuses a batch over the limit before allocating for it.
	m, err := LoadBytesWith(b, "m.onnx", LoadOptions{MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	x := tensor.New(tensor.WithShape(3000, 3, 4, 4), tensor.Of(tensor.Float32))
	if _, err := m.Run(x); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "a batch of 3000 needs") {
		t.Errorf("run of 3000 images: %v", err)
	}

	// The per-tensor limit, on a declared input and on a computed value.
	if _, err := LoadBytesWith(b, "m.onnx", LoadOptions{MaxElements: 47}); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), `input "x" of shape [-1 3 4 4] has more than 47 elements`) {
		t.Errorf("MaxElements 47: %v", err)
	}
	// The per-tensor limit is per image of the batch: a graph that runs
	// the whole batch at once (ReduceMean is not known to be per image)
	// holds tensors of 3·48 values at batch 3.
	rm := ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "r", Op: "ReduceMean", In: []string{"x"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.Ints("axes", 1)}}},
		Inputs: []ot.Value{{Name: "x", Dims: []any{"N", 48}}}, Outputs: []ot.Value{{Name: "y"}}}
	m, err = LoadBytesWith(rm.Bytes(), "rm.onnx", LoadOptions{MaxElements: 48})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Run(tensor.New(tensor.WithShape(3, 48), tensor.Of(tensor.Float32))); err != nil {
		t.Errorf("batch 3 of 48 values an image within MaxElements 48: %v", err)
	}
	// Constants computed at load time count, and are checked before they
	// are allocated: 8 ConstantOfShape of 2^20 floats (4 MiB each) within
	// 16 MiB fail at the fourth.
	cos := ot.Model{Opset: 13, Inputs: []ot.Value{{Name: "x", Dims: []any{1, 1 << 20}}}, Outputs: []ot.Value{{Name: "y"}},
		Inits: []ot.Tensor{ot.I64("s", []int64{2}, 1, 1<<20)}}
	prev := "x"
	for i, c := range []string{"c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		out := "h" + c
		if i == 7 {
			out = "y"
		}
		cos.Nodes = append(cos.Nodes, ot.Node{Name: c, Op: "ConstantOfShape", In: []string{"s"}, Out: []string{c}},
			ot.Node{Name: "a" + c, Op: "Add", In: []string{prev, c}, Out: []string{out}})
		prev = out
	}
	_, err = LoadBytesWith(cos.Bytes(), "cos.onnx", LoadOptions{MaxBytes: 16 << 20})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), `node "c3" (ConstantOfShape, opset 13): weights and constants computed at load time would need`) {
		t.Errorf("constants over the limit: %v", err)
	}
	// The number of nodes.
	if _, err := LoadBytesWith(cos.Bytes(), "cos.onnx", LoadOptions{MaxNodes: 15}); !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "16 nodes, more than the limit of 15") {
		t.Errorf("MaxNodes 15: %v", err)
	}
	if _, err := LoadBytesWith(b, "m.onnx", LoadOptions{MaxBytes: -1}); err == nil {
		t.Error("negative MaxBytes: no error")
	}
}

// TestLoadWithFile checks the errors of LoadWith on files: each a
// *ModelError naming the file once.
func TestLoadWithFile(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.onnx")
	if err := os.WriteFile(big, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		path string
		opt  LoadOptions
		want string
		is   error
	}{
		{filepath.Join(dir, "none.onnx"), LoadOptions{}, "invalid model " + filepath.Join(dir, "none.onnx") + ": no such file or directory", fs.ErrNotExist},
		{dir, LoadOptions{}, "invalid model " + dir + ": is a directory", nil},
		{big, LoadOptions{MaxBytes: 999}, "invalid model " + big + ": the file has 1000 bytes, more than the limit of 999 B", ErrLimit},
		{big, LoadOptions{}, "invalid model " + big + ": truncated or not an ONNX file", nil},
	}
	for _, c := range cases {
		_, err := LoadWith(c.path, c.opt)
		var me *ModelError
		if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), c.want) || (c.is != nil && !errors.Is(err, c.is)) {
			t.Errorf("%s: got %v, want %q…", c.path, err, c.want)
		}
	}
}

// TestModelErrorOneLine checks that ModelError escapes what would break
// its message over lines and cuts long reasons.
func TestModelErrorOneLine(t *testing.T) {
	e := &ModelError{File: "a\nb.onnx", Err: errors.New("bad\r\nthing\x00" + strings.Repeat("x", 2000))}
	msg := e.Error()
	if !strings.HasPrefix(msg, `invalid model a\nb.onnx: bad\r\nthing\x00xxx`) || !strings.HasSuffix(msg, "…") || len(msg) > 1000 {
		t.Errorf("message %q", msg)
	}
}

// TestOddButValid loads models that are unusual but valid and checks their
// outputs: data in typed fields or of other types than float, bool stored
// raw, attributes without a type (IR version 1), huge Slice steps, Pad by
// reflection over more than the axis, Range with int64 extremes.
func TestOddButValid(t *testing.T) {
	x4 := []ot.Value{{Name: "x", Dims: []any{1, 4}}}
	y := []ot.Value{{Name: "y"}}
	in := []float32{1, 2, 3, 4}
	cases := []struct {
		name string
		m    ot.Model
		want []float32
	}{
		{"float_data", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Add", In: []string{"x", "w"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{{Name: "w", Dims: []int64{4}, Extra: ot.Bytes(nil, 4, f32bytes(10, 20, 30, 40))}},
			Inputs: x4, Outputs: y}, []float32{11, 22, 33, 44}},
		{"double initializer", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Add", In: []string{"x", "w"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{{Name: "w", Dims: []int64{1}, DataType: 11, Raw: f64bytes(0.5)}},
			Inputs: x4, Outputs: y}, []float32{1.5, 2.5, 3.5, 4.5}},
		{"int32 shape", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Reshape", In: []string{"x", "s"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{{Name: "s", Dims: []int64{2}, DataType: 6, Extra: ot.Bytes(nil, 5, []byte{2, 2})}}, // int32_data [2, 2], packed
			Inputs: x4, Outputs: y}, nil},
		{"bool raw mask", ot.Model{Opset: 13, Nodes: []ot.Node{
			{Name: "c", Op: "Cast", In: []string{"m"}, Out: []string{"mf"}, Attrs: []ot.Attr{ot.Int("to", 1)}},
			{Name: "n", Op: "Mul", In: []string{"x", "mf"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{{Name: "m", Dims: []int64{4}, DataType: 9, Raw: []byte{1, 0, 7, 0}}},
			Inputs: x4, Outputs: y}, []float32{1, 0, 3, 0}},
		{"attribute without a type", ot.Model{Opset: 6, Nodes: []ot.Node{{Name: "n", Op: "LeakyRelu", In: []string{"x"}, Out: []string{"y"},
			Attrs: []ot.Attr{ot.RawAttr(ot.Fixed32(ot.Bytes(nil, 1, []byte("alpha")), 2, math.Float32bits(0.5)))}}},
			Inputs: []ot.Value{{Name: "x", Dims: []any{1, 2}}}, Outputs: y}, nil},
		{"Slice by a step of MaxInt64", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Slice", In: []string{"x", "st", "en", "ax", "sp"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{ot.I64("st", []int64{1}, 1), ot.I64("en", []int64{1}, math.MaxInt64), ot.I64("ax", []int64{1}, 1), ot.I64("sp", []int64{1}, math.MaxInt64)},
			Inputs: x4, Outputs: y}, []float32{2}},
		{"Slice by a step of MinInt64", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Slice", In: []string{"x", "st", "en", "ax", "sp"}, Out: []string{"y"}}},
			Inits:  []ot.Tensor{ot.I64("st", []int64{1}, -1), ot.I64("en", []int64{1}, math.MinInt64), ot.I64("ax", []int64{1}, 1), ot.I64("sp", []int64{1}, math.MinInt64)},
			Inputs: x4, Outputs: y}, []float32{4}},
		{"Pad by reflection over twice the axis", ot.Model{Opset: 13, Nodes: []ot.Node{{Name: "n", Op: "Pad", In: []string{"x", "p"}, Out: []string{"y"}, Attrs: []ot.Attr{ot.String("mode", "reflect")}}},
			Inits:  []ot.Tensor{ot.I64("p", []int64{4}, 0, 7, 0, 6)},
			Inputs: x4, Outputs: y}, []float32{2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4, 3, 2, 1, 2, 3, 4}}, // numpy.pad(…, "reflect")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := mustLoad(t, c.m)
			xin := in
			if s := m.Inputs()[0].Shape; s[1] == 2 {
				xin = []float32{-2, 2}
			}
			got := run1(t, m, dense(m.Inputs()[0].Shape, xin))
			switch c.name {
			case "int32 shape":
				if s := m.Outputs()[0].Shape; len(s) != 2 || s[0] != 2 || s[1] != 2 {
					t.Errorf("shape %v, want [2 2]", s)
				}
			case "attribute without a type":
				approx(t, got, []float32{-1, 2}, 0)
			default:
				approx(t, got, c.want, 0)
			}
		})
	}
}

func f32bytes(v ...float32) []byte {
	var b []byte
	for _, x := range v {
		u := math.Float32bits(x)
		b = append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24))
	}
	return b
}

func f64bytes(v ...float64) []byte {
	var b []byte
	for _, x := range v {
		u := math.Float64bits(x)
		for k := 0; k < 8; k++ {
			b = append(b, byte(u>>(8*k)))
		}
	}
	return b
}
