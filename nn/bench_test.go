package nn

import (
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
	"github.com/amt-dev/amt/nn/kernels"
)

// benchCases are the models of BenchmarkModels. The sub-benchmark names
// (model/bBATCH) are stable: scripts comparing with ONNX Runtime rely on
// them. A file is in the shared assets' models folder, or, prefixed with
// "testdata:", in testdata/models (issue #18's small ViT and ConvNeXt).
var benchCases = []struct {
	name  string
	file  string
	batch int
	shape []int // per image
}{
	{"squeezenet/b1", "cifar10_squeezenet1_1.onnx", 1, []int{3, 224, 224}},
	{"squeezenet/b60", "cifar10_squeezenet1_1.onnx", 60, []int{3, 224, 224}},
	{"resnet20/b1", "cifar10_resnet20.onnx", 1, []int{3, 32, 32}},
	{"resnet20/b60", "cifar10_resnet20.onnx", 60, []int{3, 32, 32}},
	{"features512/b1", "features512_squeezenet1_1.onnx", 1, []int{3, 224, 224}},
	{"yolov3tiny/b1", "coco_yolov3-tiny.onnx", 1, []int{3, 416, 416}},
	{"vit/b1", "testdata:arch/vit_bench_o17.onnx", 1, []int{3, 224, 224}},
	{"convnext/b1", "testdata:arch/convnext_bench_o17.onnx", 1, []int{3, 224, 224}},
}

// benchModelPath returns the path of a benchCases file.
func benchModelPath(assets, file string) string {
	if rest, ok := strings.CutPrefix(file, "testdata:"); ok {
		return filepath.Join("testdata", "models", filepath.FromSlash(rest))
	}
	return filepath.Join(assets, "models", file)
}

// randInput returns a deterministic input of the given shape.
func randInput(shape []int, seed uint64) *tensor.Dense {
	r := rand.New(rand.NewPCG(seed, 1))
	data := make([]float32, numel(shape))
	for i := range data {
		data[i] = r.Float32()*4 - 2
	}
	return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(data))
}

// BenchmarkModels reports the time per image (ms/img) and the allocations
// per run of the shipped models. Run with
//
//	go test ./nn -run '^$' -bench BenchmarkModels -benchtime 20x
func BenchmarkModels(b *testing.B) {
	assets := sharedpath.ForTest(b, "assets")
	models := map[string]*Model{}
	for _, c := range benchCases {
		b.Run(c.name, func(b *testing.B) {
			m := models[c.file]
			if m == nil {
				var err error
				if m, err = Load(benchModelPath(assets, c.file)); err != nil {
					b.Fatal(err)
				}
				models[c.file] = m
			}
			x := randInput(append([]int{c.batch}, c.shape...), 1)
			if _, err := m.Run(x); err != nil { // builds the graph for this batch size
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := m.Run(x); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N*c.batch), "ms/img")
		})
	}
}

// smallNet is a small CNN using the engine's main operators (Conv fused
// with BatchNormalization and Relu, MaxPool, residual Add, global pooling,
// Gemm, Softmax) with a dynamic batch.
func smallNet() ot.Model {
	w := func(name string, dims ...int64) ot.Tensor {
		n := 1
		for _, d := range dims {
			n *= int(d)
		}
		return ot.F32(name, dims, seq(n, 0.01)...)
	}
	return ot.Model{Opset: 13,
		Nodes: []ot.Node{
			{Name: "conv1", Op: "Conv", In: []string{"x", "w1", "b1"}, Out: []string{"c1"}, Attrs: []ot.Attr{ot.Ints("pads", 1, 1, 1, 1)}},
			{Name: "bn1", Op: "BatchNormalization", In: []string{"c1", "g", "be", "mu", "var"}, Out: []string{"n1"}},
			{Name: "relu1", Op: "Relu", In: []string{"n1"}, Out: []string{"r1"}},
			{Name: "pool", Op: "MaxPool", In: []string{"r1"}, Out: []string{"p1"}, Attrs: []ot.Attr{ot.Ints("kernel_shape", 2, 2), ot.Ints("strides", 2, 2)}},
			{Name: "conv2", Op: "Conv", In: []string{"p1", "w2"}, Out: []string{"c2"}, Attrs: []ot.Attr{ot.Ints("pads", 1, 1, 1, 1)}},
			{Name: "add", Op: "Add", In: []string{"c2", "p1"}, Out: []string{"s"}},
			{Name: "gap", Op: "GlobalAveragePool", In: []string{"s"}, Out: []string{"g1"}},
			{Name: "flat", Op: "Flatten", In: []string{"g1"}, Out: []string{"f"}},
			{Name: "fc", Op: "Gemm", In: []string{"f", "wf", "bf"}, Out: []string{"l"}, Attrs: []ot.Attr{ot.Int("transB", 1)}},
			{Name: "sm", Op: "Softmax", In: []string{"l"}, Out: []string{"y"}},
		},
		Inits: []ot.Tensor{
			w("w1", 8, 3, 3, 3), w("b1", 8), w("g", 8), w("be", 8), w("mu", 8), ot.F32("var", []int64{8}, 1, 2, 3, 4, 5, 6, 7, 8),
			w("w2", 8, 8, 3, 3), w("wf", 10, 8), w("bf", 10),
		},
		Inputs:  []ot.Value{{Name: "x", Dims: []any{"N", 3, 16, 16}}},
		Outputs: []ot.Value{{Name: "y", Dims: []any{"N", 10}}},
	}
}

// heapAfterGC returns HeapInuse after a full collection.
func heapAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// checkMemoryStable runs m on x runs times after a warm-up and fails if
// the heap in use grew by more than slack bytes; every output must equal
// the first.
func checkMemoryStable(t *testing.T, m *Model, x *tensor.Dense, runs int, slack uint64) {
	t.Helper()
	first, err := m.Run(x)
	if err != nil {
		t.Fatal(err)
	}
	ref := first[0].Data().([]float32)
	for i := 0; i < 20; i++ {
		m.Run(x)
	}
	before := heapAfterGC()
	for i := 0; i < runs; i++ {
		outs, err := m.Run(x)
		if err != nil {
			t.Fatal(err)
		}
		if i%1000 == 0 {
			got := outs[0].Data().([]float32)
			for k := range got {
				if got[k] != ref[k] {
					t.Fatalf("run %d: output %d is %g, first run gave %g", i, k, got[k], ref[k])
				}
			}
		}
	}
	after := heapAfterGC()
	t.Logf("HeapInuse after warm-up %d B, after %d runs %d B", before, runs, after)
	if after > before+slack {
		t.Errorf("heap in use grew from %d to %d bytes over %d runs", before, after, runs)
	}
}

// TestMemoryStable runs a small CNN 10,000 times at batch 1: the heap in
// use must not grow and the output must not change.
func TestMemoryStable(t *testing.T) {
	m, err := LoadBytes(smallNet().Bytes(), "smallnet")
	if err != nil {
		t.Fatal(err)
	}
	checkMemoryStable(t, m, randInput([]int{1, 3, 16, 16}, 2), 10000, 256<<10)
}

// TestMemoryStableResNet20 is the same check on ResNet-20 (long: skipped
// in short mode).
func TestMemoryStableResNet20(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 ResNet-20 inferences take minutes")
	}
	assets := sharedpath.ForTest(t, "assets")
	m, err := Load(filepath.Join(assets, "models", "cifar10_resnet20.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	checkMemoryStable(t, m, randInput([]int{1, 3, 32, 32}, 3), 10000, 1<<20)
}

// TestDirectRun checks that a model's graphs run on the calling goroutine
// (internal/tape), not silently through RunAll.
func TestDirectRun(t *testing.T) {
	m, err := LoadBytes(smallNet().Bytes(), "smallnet")
	if err != nil {
		t.Fatal(err)
	}
	for _, batch := range []int{1, 3} {
		if _, err := m.Run(randInput([]int{batch, 3, 16, 16}, 1)); err != nil {
			t.Fatal(err)
		}
	}
	for n, inst := range m.insts {
		if !inst.tape.Direct() {
			t.Errorf("graph for %d: the machine (%T) runs through RunAll", n, inst.vm)
		}
	}
}

// TestFusion checks that Conv+BatchNormalization+Relu+MaxPool become one
// Gorgonia op, that the residual Add is fused into the Conv before it and
// that Flatten is an alias, not a copy.
func TestFusion(t *testing.T) {
	m, err := LoadBytes(smallNet().Bytes(), "smallnet")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := m.instance(1)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range inst.g.AllNodes() {
		if o, ok := n.Op().(*gop); ok {
			ops = append(ops, o.label)
		}
	}
	want := []string{"Conv(conv1)", "Conv(conv2)", "GlobalAveragePool(gap)", "Gemm(fc)", "Softmax(sm)"}
	if kernels.KernelSet() == "reference" {
		// refkernels builds: the reference convolution computes no
		// MaxPool with it (kernels.NewConvMaxPool declines).
		want = append(want, "MaxPool(pool)")
	}
	slices.Sort(ops)
	slices.Sort(want)
	if !slices.Equal(ops, want) {
		t.Errorf("graph ops %v, want %v", ops, want)
	}
}
