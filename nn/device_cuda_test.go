//go:build gpu

package nn

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/fakecuda"
	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/nn/cuda"
	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// The GPU path through the fake CUDA driver (internal/fakecuda), which
// runs the same kernel sources on the host: whole models against the CPU
// engine and ONNX Runtime, the copies between host and device, and the
// error paths. TestDeviceRealGPU runs where a GPU is present.

// fakeOptions returns load options for the fake driver, its switches reset
// now and when the test ends, with log lines going to the test's log.
func fakeOptions(t *testing.T, device string) (LoadOptions, string) {
	t.Helper()
	lib := fakecuda.Lib(t, fakecuda.Default)
	fakecuda.Set(t, lib, "reset", 0)
	t.Cleanup(func() { fakecuda.Set(t, lib, "reset", 0) })
	return LoadOptions{Device: device, CUDA: cuda.Config{Lib: lib}, Logf: t.Logf}, lib
}

// testDevice is a GPU the tests run on: the fake (lib is its library, for
// its counters) or the machine's own (lib "").
type testDevice struct {
	opts LoadOptions
	lib  string
}

// forEachDevice runs f on the fake GPU and on the machine's GPU; the
// latter skips where libcuda.so.1 does not open a GPU, unless AMT_GPU=1,
// which makes that a failure.
func forEachDevice(t *testing.T, f func(t *testing.T, d testDevice)) {
	t.Run("fake", func(t *testing.T) {
		opts, lib := fakeOptions(t, "cuda")
		f(t, testDevice{opts, lib})
	})
	t.Run("gpu", func(t *testing.T) {
		cfg := cuda.Config{Lib: "libcuda.so.1"}
		d, err := cuda.Open(cfg)
		if err != nil {
			if os.Getenv("AMT_GPU") == "1" {
				t.Fatalf("AMT_GPU=1 but no GPU can be opened: %v", err)
			}
			if !cuda.Unavailable(err) {
				t.Fatalf("opening the GPU: %v", err)
			}
			t.Skipf("no GPU: %v", err)
		}
		t.Logf("GPU: %v", d)
		d.Close()
		f(t, testDevice{LoadOptions{Device: "cuda", CUDA: cfg, Logf: t.Logf}, ""})
	})
}

// copies counts the host↔device copies of f through the fake driver lib;
// with lib "" (a real GPU, which has no counters) it runs f and returns
// -1, -1.
func copies(t *testing.T, lib string, f func()) (htod, dtoh int64) {
	t.Helper()
	if lib == "" {
		f()
		return -1, -1
	}
	h0, d0 := fakecuda.Stat(t, lib, "htod_calls"), fakecuda.Stat(t, lib, "dtoh_calls")
	f()
	return fakecuda.Stat(t, lib, "htod_calls") - h0, fakecuda.Stat(t, lib, "dtoh_calls") - d0
}

// TestDeviceGoldenModels runs every shipped model on the fake GPU (and on
// the machine's, if any): each output within 1e-4·max(1,|want|) of the CPU
// engine's and of ONNX Runtime's, for images alone (batch 1) and all
// golden images as one batch, with exactly one copy to the device per
// input and one back per output for each batch (counted by the fake), and
// no op left on the CPU. Short mode runs the first image alone and one
// yolov3-tiny image.
func TestDeviceGoldenModels(t *testing.T) {
	forEachDevice(t, testGoldenModels)
}

func testGoldenModels(t *testing.T, dev testDevice) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	opts, lib := dev.opts, dev.lib
	type pair struct{ cpu, gpu *Model }
	models := map[string]pair{}
	defer func() {
		for _, pr := range models {
			pr.gpu.Close()
		}
	}()
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && (c.name == "yolov3tiny/92660" || c.name == "yolov3tiny/22192") {
				t.Skip("short mode: one image of yolov3-tiny")
			}
			pr, ok := models[c.model]
			if !ok {
				path := filepath.Join(assets, "models", c.model)
				cpu, err := Load(path)
				if err != nil {
					t.Fatal(err)
				}
				gpu, err := LoadWith(path, opts)
				if err != nil {
					t.Fatal(err)
				}
				if fb := gpu.DeviceFallbacks(); len(fb) > 0 {
					t.Errorf("ops on the CPU: %v", fb)
				}
				pr = pair{cpu, gpu}
				models[c.model] = pr
			}
			in := goldentest.ReadF32(t, filepath.Join(golden, c.input))
			want := goldentest.ReadF32(t, filepath.Join(golden, c.output))
			n := c.shape[0]
			per := len(in) / n
			check := func(label string, x []float32, shape []int, img0 int) {
				t.Helper()
				imgs := shape[0]
				mk := func() *tensor.Dense {
					return tensor.New(tensor.WithShape(shape...), tensor.WithBacking(append([]float32(nil), x...)))
				}
				cpuOuts, err := pr.cpu.Run(mk())
				if err != nil {
					t.Fatal(err)
				}
				// The graph for this batch size is built (and the weights
				// uploaded) first, so that only the run's copies count.
				if err := pr.gpu.dev.acc.prepare(pr.gpu, pr.gpu.p.batchKey(imgs)); err != nil {
					t.Fatal(err)
				}
				var gpuOuts []*tensor.Dense
				htod, dtoh := copies(t, lib, func() {
					if gpuOuts, err = pr.gpu.Run(mk()); err != nil {
						t.Fatalf("%s: %v", label, err)
					}
				})
				if lib != "" && (htod != 1 || dtoh != int64(len(gpuOuts))) {
					t.Errorf("%s: %d copies to the device and %d back, want 1 and %d", label, htod, dtoh, len(gpuOuts))
				}
				off := 0
				for k, o := range gpuOuts {
					got := o.Data().([]float32)
					if !slicesEqual(o.Shape(), cpuOuts[k].Shape()) {
						t.Errorf("%s output %d: shape %v, the CPU's %v", label, k, o.Shape(), cpuOuts[k].Shape())
					}
					if err := closeTo(got, cpuOuts[k].Data().([]float32), 1e-4); err != nil {
						t.Errorf("%s output %d vs the CPU: %v", label, k, err)
					}
					size := len(got) / imgs
					var w []float32
					for b := 0; b < imgs; b++ {
						s := off + (img0+b)*size
						w = append(w, want[s:s+size]...)
					}
					if err := closeTo(got, w, 1e-4); err != nil {
						t.Errorf("%s output %d vs ONNX Runtime: %v", label, k, err)
					}
					off += size * n
				}
			}
			alone := n
			if testing.Short() {
				alone = 1
			}
			for b := 0; b < alone; b++ {
				check(fmt.Sprintf("image %d alone", b), in[b*per:(b+1)*per], append([]int{1}, c.shape[1:]...), b)
			}
			if n > 1 {
				check("whole batch", in, c.shape, 0)
			}
		})
	}
}

func slicesEqual(a, b tensor.Shape) bool { return a.Eq(b) }

// TestDeviceYoloBatch runs the three yolov3-tiny golden images as one batch
// through the fixed-batch model on the fake GPU: image by image on the
// device, with one copy of the batch to the device and one of each output
// back.
func TestDeviceYoloBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode: three yolov3-tiny inferences")
	}
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	opts, lib := fakeOptions(t, "cuda")
	m, err := LoadWith(filepath.Join(assets, "models", "coco_yolov3-tiny.onnx"), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ids := []string{"802", "92660", "22192"}
	var in []float32
	for _, id := range ids {
		in = append(in, goldentest.ReadF32(t, filepath.Join(golden, "detection", "img_"+id+"_input.f32"))...)
	}
	var outs []*tensor.Dense
	htod, dtoh := copies(t, lib, func() {
		outs, err = m.Run(tensor.New(tensor.WithShape(3, 3, 416, 416), tensor.WithBacking(in)))
		if err != nil {
			t.Fatal(err)
		}
	})
	if htod != 1 || dtoh != 2 {
		t.Errorf("%d copies to the device and %d back, want 1 and 2", htod, dtoh)
	}
	h0, h1 := outs[0].Data().([]float32), outs[1].Data().([]float32)
	n0, n1 := 255*13*13, 255*26*26
	for i, id := range ids {
		want := goldentest.ReadF32(t, filepath.Join(golden, "detection", "img_"+id+"_heads.f32"))
		got := append(append([]float32(nil), h0[i*n0:(i+1)*n0]...), h1[i*n1:(i+1)*n1]...)
		if err := closeTo(got, want, 1e-4); err != nil {
			t.Errorf("image %s: %v", id, err)
		}
	}
}

// TestDeviceErrors checks the error paths: no driver, no device, out of
// memory and a failed kernel each stop with an error naming the cause
// under "cuda", and move the model to the CPU, with a log line and the
// CPU's results, under "cuda,cpu".
func TestDeviceErrors(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	path := filepath.Join(assets, "models", "cifar10_resnet20.onnx")
	cpu, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float32, 2*3*32*32)
	for i := range x {
		x[i] = float32(i%97)/97 - 0.5
	}
	input := func() *tensor.Dense {
		return tensor.New(tensor.WithShape(2, 3, 32, 32), tensor.WithBacking(append([]float32(nil), x...)))
	}
	want, err := cpu.Run(input())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		setup  func(t *testing.T, o *LoadOptions, lib string)
		atLoad bool   // the failure shows when loading, else when running
		is     error  // the error wraps this
		text   string // and says this
	}{
		{"out of memory when running", nil, false, cuda.ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{"no driver", func(t *testing.T, o *LoadOptions, _ string) {
			o.CUDA.Lib = filepath.Join(t.TempDir(), "libcuda.so.1")
		}, true, cuda.ErrNoDriver, "is the NVIDIA driver installed?"},
		{"no device", func(t *testing.T, _ *LoadOptions, lib string) {
			fakecuda.Set(t, lib, "fail_init", int64(cuda.ErrNoDevice))
		}, true, cuda.ErrNoDevice, "CUDA_ERROR_NO_DEVICE"},
		{"out of memory", func(t *testing.T, _ *LoadOptions, lib string) {
			fakecuda.Set(t, lib, "mem_limit", 64<<10)
		}, true, cuda.ErrOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY"},
		{"launch failure", func(t *testing.T, _ *LoadOptions, lib string) {
			fakecuda.Set(t, lib, "fail_launch", 5)
		}, false, cuda.ErrLaunchFailed, "CUDA_ERROR_LAUNCH_FAILED"},
	}
	for _, c := range cases {
		for _, device := range []string{"cuda", "cuda,cpu"} {
			t.Run(c.name+"/"+device, func(t *testing.T) {
				opts, lib := fakeOptions(t, device)
				var logged []string
				opts.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
				if c.setup != nil {
					c.setup(t, &opts, lib)
				}
				m, err := LoadWith(path, opts)
				if err == nil {
					defer m.Close()
					if c.setup == nil {
						// Loading built the graph for one image; the graph
						// for two needs more memory than is left.
						fakecuda.Set(t, lib, "mem_limit", fakecuda.Stat(t, lib, "allocated")+1<<10)
					}
					_, err = m.Run(input())
					if device == "cuda,cpu" && err == nil {
						// The failed batch ran again on the CPU.
						err = errors.New(strings.Join(logged, "\n"))
					}
				}
				if device == "cuda" {
					if err == nil {
						t.Fatal("no error")
					}
					if (m == nil) != c.atLoad {
						t.Errorf("error at load: %v, want %v", m == nil, c.atLoad)
					}
					if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.text) {
						t.Errorf("error %q: want it to wrap %v and say %q", err, c.is, c.text)
					}
					return
				}
				t.Logf("logged: %q", logged)
				if len(logged) == 0 || !strings.Contains(logged[0], c.text) || !strings.Contains(logged[0], "running on the CPU") {
					t.Errorf("log %q: want a line saying %q and that the model runs on the CPU", logged, c.text)
				}
				if m.Device() != "cpu" {
					t.Errorf("device after the failure: %q, want cpu", m.Device())
				}
				got, err := m.Run(input())
				if err != nil {
					t.Fatal(err)
				}
				if err := closeTo(got[0].Data().([]float32), want[0].Data().([]float32), 0); err != nil {
					t.Errorf("on the CPU after the failure: %v", err)
				}
			})
		}
	}
}

// TestDeviceManifest runs the ONNX fixtures of testdata/models on the fake
// GPU (and on the machine's, if any) against ONNX Runtime's outputs, as
// TestManifestModels does on the CPU, and reports how many ran entirely on
// the device and which ops ran on the CPU. An op runs on the CPU only for
// want of a GPU implementation (no description of its work, or one of a
// kind or size the GPU lacks): a description the GPU refuses otherwise
// is a mismatch between the two, and fails.
func TestDeviceManifest(t *testing.T) {
	forEachDevice(t, testManifest)
}

func testManifest(t *testing.T, dev testDevice) {
	dir, entries := readManifest(t)
	opts := dev.opts
	opts.Logf = nil
	onDevice := 0
	fallbacks := map[string]int{} // operator → fixtures
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			var m *Model
			runManifestEntry(t, dir, e, func(path string) (*Model, error) {
				var err error
				m, err = LoadWith(path, opts)
				return m, err
			})
			if m == nil {
				return
			}
			defer m.Close()
			fb := m.DeviceFallbacks()
			if len(fb) == 0 {
				onDevice++
			}
			ops := map[string]bool{}
			for _, l := range fb {
				ops[l[:strings.IndexByte(l, '(')]] = true
			}
			for op := range ops {
				fallbacks[op]++
			}
			if len(fb) > 0 {
				t.Logf("on the CPU: %s", strings.Join(fb, ", "))
			}
			for l, why := range m.dev.acc.(*cudaAccel).why {
				if !errors.Is(why, errNoDeviceOp) {
					t.Errorf("%s runs on the CPU: the GPU refuses its description: %v", l, why)
				}
			}
		})
	}
	var ops []string
	for op, n := range fallbacks {
		ops = append(ops, fmt.Sprintf("%s (%d)", op, n))
	}
	slices.Sort(ops)
	t.Logf("%d of %d fixtures ran entirely on the device; operators run on the CPU (fixtures): %s", onDevice, len(entries), strings.Join(ops, ", "))
}

// TestDeviceCPUOps runs ops on the CPU inside the GPU graph (LoadOptions.
// CPUOps): SqueezeNet's Convs, most of which write straight into a Concat,
// and ResNet-20's Convs, which add a residual, and its Gemm. The results
// match the CPU's, and every such op is reported.
func TestDeviceCPUOps(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	cases := []struct {
		model string
		ops   []string
		shape []int
	}{
		{"cifar10_squeezenet1_1.onnx", []string{"Conv"}, []int{2, 3, 224, 224}},
		{"cifar10_resnet20.onnx", []string{"Conv", "Gemm"}, []int{3, 3, 32, 32}},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			path := filepath.Join(assets, "models", c.model)
			cpu, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			opts, _ := fakeOptions(t, "cuda")
			var logged []string
			opts.Logf = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
			opts.CPUOps = c.ops
			gpu, err := LoadWith(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer gpu.Close()
			x := make([]float32, numel(c.shape))
			for i := range x {
				x[i] = float32(i%251)/251 - 0.5
			}
			want, err := cpu.Run(tensor.New(tensor.WithShape(c.shape...), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			got, err := gpu.Run(tensor.New(tensor.WithShape(c.shape...), tensor.WithBacking(x)))
			if err != nil {
				t.Fatal(err)
			}
			if err := closeTo(got[0].Data().([]float32), want[0].Data().([]float32), 1e-4); err != nil {
				t.Error(err)
			}
			fb := gpu.DeviceFallbacks()
			counts := map[string]int{}
			for _, l := range fb {
				counts[l[:strings.IndexByte(l, '(')]]++
			}
			for _, op := range c.ops {
				if counts[op] == 0 {
					t.Errorf("no %s among the ops on the CPU: %v", op, fb)
				}
			}
			if len(counts) != len(c.ops) {
				t.Errorf("ops on the CPU: %v, want only %v", fb, c.ops)
			}
			if len(logged) == 0 || !strings.Contains(logged[0], "run on the CPU") {
				t.Errorf("log %q: want a line listing the ops on the CPU", logged)
			}
		})
	}
}

// TestDeviceFallback runs a graph whose middle op the GPU cannot run (a
// Transpose of rank 7: the kernels index at most 6 axes) on the fake GPU:
// that op runs on the CPU between GPU ops, the result is the CPU's.
func TestDeviceFallback(t *testing.T) {
	shape := []int{2, 1, 3, 2, 1, 2, 3}
	m := ot.Model{
		Opset:  13,
		Inputs: []ot.Value{{Name: "x", Dims: dims(shape)}},
		Nodes: []ot.Node{
			{Name: "r1", Op: "Relu", In: []string{"x"}, Out: []string{"a"}},
			{Name: "t", Op: "Transpose", In: []string{"a"}, Out: []string{"b"}, Attrs: []ot.Attr{ot.Ints("perm", 6, 0, 5, 1, 4, 2, 3)}},
			{Name: "s", Op: "Sigmoid", In: []string{"b"}, Out: []string{"y"}},
		},
		Outputs: []ot.Value{{Name: "y", Dims: dims([]int{3, 2, 2, 1, 1, 3, 2})}},
	}
	cpu, err := LoadBytes(m.Bytes(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	opts, lib := fakeOptions(t, "cuda")
	gpu, err := LoadBytesWith(m.Bytes(), t.Name(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	if fb := gpu.DeviceFallbacks(); len(fb) != 1 || fb[0] != "Transpose(t)" {
		t.Errorf("ops on the CPU: %v, want [Transpose(t)]", fb)
	}
	x := seq(numel(shape), 0.25)
	want := run1(t, cpu, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x)))
	var got []float32
	htod, dtoh := copies(t, lib, func() { got = run1(t, gpu, tensor.New(tensor.WithShape(shape...), tensor.WithBacking(x))) })
	if err := closeTo(got, want, 1e-6); err != nil {
		t.Error(err)
	}
	// The input, and the Transpose's output back; the Relu's output to
	// the host, and the graph's output.
	if htod != 2 || dtoh != 2 {
		t.Errorf("%d copies to the device and %d back, want 2 and 2", htod, dtoh)
	}
}

// TestDeviceOutputs covers graph outputs that are no op's: a constant and
// the graph input itself, beside a computed one, in a model of fixed batch
// 1 run on one image and on a batch of three (image by image on the
// device), against the CPU.
func TestDeviceOutputs(t *testing.T) {
	m := ot.Model{
		Opset:  13,
		Inputs: []ot.Value{{Name: "x", Dims: dims([]int{1, 4})}},
		Nodes: []ot.Node{
			{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}},
			{Name: "c", Op: "Constant", Out: []string{"c"}, Attrs: []ot.Attr{ot.TensorAttr("value", ot.F32("", []int64{1, 2}, 7, -8))}},
			{Name: "i", Op: "Identity", In: []string{"x"}, Out: []string{"z"}},
		},
		Outputs: []ot.Value{{Name: "y", Dims: dims([]int{1, 4})}, {Name: "c", Dims: dims([]int{1, 2})}, {Name: "z", Dims: dims([]int{1, 4})}},
	}
	cpu, err := LoadBytes(m.Bytes(), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	opts, _ := fakeOptions(t, "cuda")
	gpu, err := LoadBytesWith(m.Bytes(), t.Name(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer gpu.Close()
	for _, n := range []int{1, 3} {
		x := seq(4*n, 1)
		want, err := cpu.Run(tensor.New(tensor.WithShape(n, 4), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := gpu.Run(tensor.New(tensor.WithShape(n, 4), tensor.WithBacking(x)))
		if err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if !got[k].Shape().Eq(want[k].Shape()) {
				t.Errorf("batch %d output %d: shape %v, the CPU's %v", n, k, got[k].Shape(), want[k].Shape())
			}
			if err := closeTo(got[k].Data().([]float32), want[k].Data().([]float32), 0); err != nil {
				t.Errorf("batch %d output %d: %v", n, k, err)
			}
		}
	}
}
