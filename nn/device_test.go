//go:build !gpu

package nn

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/nn/cuda"
	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// TestDeviceNotBuilt: without the gpu build tag, device cuda is an error
// saying how to build with GPU support, and cuda,cpu runs on the CPU with
// a line saying why.
func TestDeviceNotBuilt(t *testing.T) {
	m := ot.Model{
		Opset:   13,
		Inputs:  []ot.Value{{Name: "x", Dims: dims([]int{1, 4})}},
		Nodes:   []ot.Node{{Name: "r", Op: "Relu", In: []string{"x"}, Out: []string{"y"}}},
		Outputs: []ot.Value{{Name: "y", Dims: dims([]int{1, 4})}},
	}
	if _, err := LoadBytesWith(m.Bytes(), "m.onnx", LoadOptions{Device: "cuda"}); !errors.Is(err, cuda.ErrNotBuilt) || !strings.Contains(err.Error(), "-tags gpu") {
		t.Errorf("device cuda: error %v, want one wrapping cuda.ErrNotBuilt", err)
	}
	var logged []string
	mod, err := LoadBytesWith(m.Bytes(), "m.onnx", LoadOptions{Device: "cuda,cpu", Logf: func(f string, a ...any) { logged = append(logged, f) }})
	if err != nil {
		t.Fatal(err)
	}
	if mod.Device() != "cpu" || len(logged) != 1 || mod.DeviceFallbacks() != nil || mod.Close() != nil {
		t.Errorf("device cuda,cpu: runs on %q, logged %q", mod.Device(), logged)
	}
	for _, bad := range []string{"gpu", "CUDA", "cpu,cuda"} {
		if _, err := LoadWith(filepath.Join(t.TempDir(), "missing.onnx"), LoadOptions{Device: bad}); err == nil || !strings.Contains(err.Error(), "unknown device") {
			t.Errorf("device %q: error %v, want an unknown device", bad, err)
		}
	}
}
