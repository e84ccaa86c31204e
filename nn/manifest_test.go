package nn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/nn/kernels"

	"gorgonia.org/tensor"
)

// manifestEntry is one test model of testdata/models/manifest.json: a
// torchvision architecture or a single-operator model with ONNX Runtime
// reference outputs. Paths are relative to the manifest.
type manifestEntry struct {
	Name   string   `json:"name"`
	Kind   string   `json:"kind"`
	File   string   `json:"file"`
	Opset  int64    `json:"opset"`
	Ops    []string `json:"ops"`
	Inputs []struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		File  string `json:"file"`
	} `json:"inputs"`
	Outputs []struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		File  string `json:"file"`
	} `json:"outputs"`
	Atol *float64 `json:"atol"`
	Rtol *float64 `json:"rtol"`
}

// TestManifestModels runs every model of testdata/models/manifest.json on
// its stored inputs and compares each output with ONNX Runtime's:
// |got-want| ≤ atol + rtol·|want| with the entry's tolerances, or
// 1e-4·max(1,|want|) when it gives none. Every entry runs twice; entries
// of kind "arch" with a dynamic batch axis also run image by image, and
// op by op over the whole batch when Run splits it.
func TestManifestModels(t *testing.T) {
	dir, entries := readManifest(t)
	for _, e := range entries {
		t.Run(e.Name, func(t *testing.T) {
			runManifestEntry(t, dir, e, Load)
		})
	}
}

// runManifestEntry runs one entry on a model loaded by load.
func runManifestEntry(t *testing.T, dir string, e manifestEntry, load func(path string) (*Model, error)) {
	m, err := load(filepath.Join(dir, e.File))
	if err != nil {
		t.Fatal(err)
	}
	if e.Opset != 0 && m.Opset() != e.Opset {
		t.Errorf("model opset %d, manifest says %d", m.Opset(), e.Opset)
	}
	// Inputs in graph order, matched by name.
	var ins []*tensor.Dense
	for _, info := range m.Inputs() {
		k := slices.IndexFunc(e.Inputs, func(in struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			File  string `json:"file"`
		}) bool {
			return in.Name == info.Name
		})
		if k < 0 {
			t.Fatalf("manifest has no data for model input %q", info.Name)
		}
		in := e.Inputs[k]
		data := goldentest.ReadF32(t, filepath.Join(dir, in.File))
		if len(data) != numel(in.Shape) {
			t.Fatalf("input %q: %s holds %d values, shape %v needs %d", in.Name, in.File, len(data), in.Shape, numel(in.Shape))
		}
		ins = append(ins, tensor.New(tensor.WithShape(in.Shape...), tensor.WithBacking(data)))
	}
	outInfo := m.Outputs()
	if len(outInfo) != len(e.Outputs) {
		t.Fatalf("model has %d outputs, manifest %d", len(outInfo), len(e.Outputs))
	}
	want := make([][]float32, len(e.Outputs))
	for k, o := range e.Outputs {
		if o.Name != outInfo[k].Name {
			t.Fatalf("output %d is %q, manifest says %q", k, outInfo[k].Name, o.Name)
		}
		want[k] = goldentest.ReadF32(t, filepath.Join(dir, o.File))
	}
	check := func(label string, outs []*tensor.Dense, img, n int) {
		t.Helper()
		for k, o := range outs {
			if s := e.Outputs[k].Shape; s != nil && n == 0 && !slices.Equal([]int(o.Shape()), s) {
				t.Errorf("%s: output %q has shape %v, want %v", label, outInfo[k].Name, o.Shape(), s)
			}
			w := want[k]
			got := o.Data().([]float32)
			if n > 0 { // image img of n
				per := len(w) / n
				w = w[img*per : (img+1)*per]
			}
			if err := e.close(got, w); err != nil {
				t.Errorf("%s: output %q: %v", label, outInfo[k].Name, err)
			}
		}
	}
	for rep := 1; rep <= 2; rep++ {
		outs, err := m.Run(ins...)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("whole batch, run %d", rep), outs, 0, 0)
	}
	if e.Kind == "arch" && m.p.dynamic && m.p.isSeparable() {
		// Run split the batch image by image; op by op must agree too.
		check("whole batch, op by op", batchedRun(t, m.Clone(), ins...), 0, 0)
	}
	if e.Kind != "arch" || len(ins) != 1 || m.Inputs()[0].Shape[0] >= 0 {
		return
	}
	n := ins[0].Shape()[0]
	per := ins[0].Shape().TotalSize() / n
	data := ins[0].Data().([]float32)
	for img := 0; img < n; img++ {
		s := slices.Clone([]int(ins[0].Shape()))
		s[0] = 1
		x := tensor.New(tensor.WithShape(s...), tensor.WithBacking(data[img*per:(img+1)*per]))
		outs, err := m.Run(x)
		if err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("image %d alone", img), outs, img, n)
	}
}

// readManifest reads testdata/models/manifest.json.
func readManifest(t *testing.T) (dir string, entries []manifestEntry) {
	dir = filepath.Join("testdata", "models")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no testdata/models/manifest.json")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(entries) == 0 {
		t.Fatal("manifest.json lists no models")
	}
	return dir, entries
}

// close compares with the entry's tolerances.
func (e manifestEntry) close(got, want []float32) error {
	if e.Atol == nil && e.Rtol == nil {
		return closeTo(got, want, 1e-4)
	}
	var atol, rtol float64
	if e.Atol != nil {
		atol = *e.Atol
	}
	if e.Rtol != nil {
		rtol = *e.Rtol
	}
	if len(got) != len(want) {
		return fmt.Errorf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		d := math.Abs(float64(got[i]) - float64(want[i]))
		if !(d <= atol+rtol*math.Abs(float64(want[i]))) {
			return fmt.Errorf("element %d: got %g, want %g (|diff| %.3g > atol %g + rtol %g·|want|)", i, got[i], want[i], d, atol, rtol)
		}
	}
	return nil
}

// TestManifestArchPerKernelSet runs the architecture entries of
// testdata/models/manifest.json (the zoo: ResNets, MobileNets,
// EfficientNets, ConvNeXts, ViTs, Swin…) with every kernel set of
// nn/kernels other than the one in use, which TestManifestModels covers,
// so that each set (AVX-512, AVX2, portable Go) is compared with ONNX
// Runtime on them in one test run. Models are loaded after the set is
// chosen (a convolution keeps the set it was prepared with). A set this
// CPU or build cannot run is a skipped subtest saying what it needs. Not
// in -short mode.
func TestManifestArchPerKernelSet(t *testing.T) {
	if kernels.KernelSet() == "reference" {
		t.Skip("refkernels build: the naive implementation replaces every kernel set")
	}
	if testing.Short() {
		t.Skip("full mode only (make test runs it in its golden step)")
	}
	dir := filepath.Join("testdata", "models")
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var entries []manifestEntry
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	prev := kernels.KernelSet()
	defer func() {
		if err := kernels.Use(prev); err != nil {
			t.Fatal(err)
		}
	}()
	for _, set := range kernels.KernelSets() {
		t.Run(set.Name, func(t *testing.T) {
			if set.Name == prev {
				t.Skipf("kernel set %s is the one in use: TestManifestModels covers it", set.Name)
			}
			if !set.Available {
				t.Skipf("kernel set %s not available here: %s", set.Name, set.Reason)
			}
			if err := kernels.Use(set.Name); err != nil {
				t.Fatal(err)
			}
			defer kernels.Use(prev)
			n := 0
			for _, e := range entries {
				if e.Kind != "arch" {
					continue
				}
				n++
				t.Run(e.Name, func(t *testing.T) { runManifestEntry(t, dir, e, Load) })
			}
			if n == 0 {
				t.Fatal("manifest.json lists no architectures")
			}
		})
	}
}
