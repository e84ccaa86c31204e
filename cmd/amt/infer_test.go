package main

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"

	"github.com/amt-dev/amt/internal/sharedpath"
)

func runInfer(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, append([]string{"infer"}, args...))
	return out.String(), err
}

// TestInferGolden runs ResNet-20 on the 8 golden images in batches of 3
// (3+3+2) and compares the output file with ONNX Runtime's.
func TestInferGolden(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden")
	assets := sharedpath.ForTest(t, "assets")
	out := filepath.Join(t.TempDir(), "y.f32")
	stdout, err := runInfer(t, "-model", filepath.Join(assets, "models", "cifar10_resnet20.onnx"),
		"-input", filepath.Join(golden, "onnx", "cifar10_resnet20_input.f32"),
		"-shape", "8,3,32,32", "-out", out, "-batch", "3")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "logits") {
		t.Errorf("stdout %q does not name the output", stdout)
	}
	got := goldentest.ReadF32(t, out)
	want := goldentest.ReadF32(t, filepath.Join(golden, "onnx", "cifar10_resnet20_output.f32"))
	if len(got) != len(want) {
		t.Fatalf("got %d values, want %d", len(got), len(want))
	}
	for i := range got {
		if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
			t.Fatalf("value %d: got %g, want %g", i, got[i], want[i])
		}
	}
}

// TestInferFashionMNISTZooGolden runs each model of the Fashion-MNIST zoo
// (one grey channel) on the zoo's 1,000 normalised test images in batches
// of 300 and compares the logits with PyTorch's (MANIFEST: ≤ 1e-4
// relative).
func TestInferFashionMNISTZooGolden(t *testing.T) {
	dir := filepath.Join(sharedpath.ForTest(t, "assets"), "models", "fashion-mnist")
	for _, name := range []string{"fm-mlp", "fm-lenet", "fm-cnn", "fm-cnn-seed2", "fm-cnn-flip", "fm-cnn-rot"} {
		out := filepath.Join(t.TempDir(), name+".f32")
		if _, err := runInfer(t, "-model", filepath.Join(dir, name+".onnx"), "-input", filepath.Join(dir, "fm_input_1000.f32"),
			"-shape", "1000,1,28,28", "-out", out, "-batch", "300"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := goldentest.ReadF32(t, out)
		want := goldentest.ReadF32(t, filepath.Join(dir, name+"_logits_1000.f32"))
		if len(got) != len(want) || len(want) != 10000 {
			t.Fatalf("%s: got %d values, want %d", name, len(got), len(want))
		}
		for i := range got {
			if d := math.Abs(float64(got[i] - want[i])); d > 1e-4*math.Max(1, math.Abs(float64(want[i]))) {
				t.Fatalf("%s: image %d, logit %d: got %g, want %g", name, i/10, i%10, got[i], want[i])
			}
		}
	}
}

// TestInferErrors checks that bad invocations fail with a message naming
// the problem and write no output file.
func TestInferErrors(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	model := filepath.Join(assets, "models", "cifar10_resnet20.onnx")
	dir := t.TempDir()
	good := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(good, make([]byte, 4*2*3*32*32), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "y.f32")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing model", []string{"-model", filepath.Join(dir, "nope.onnx"), "-input", good, "-shape", "2,3,32,32", "-out", out}, "nope.onnx"},
		{"not a model", []string{"-model", good, "-input", good, "-shape", "2,3,32,32", "-out", out}, "x.f32"},
		{"missing input", []string{"-model", model, "-input", filepath.Join(dir, "none.f32"), "-shape", "2,3,32,32", "-out", out}, "none.f32"},
		{"size mismatch", []string{"-model", model, "-input", good, "-shape", "3,3,32,32", "-out", out}, "needs 9216 float32 values"},
		{"wrong rank", []string{"-model", model, "-input", good, "-shape", "2,3,1024", "-out", out}, "rank 3"},
		{"wrong dims", []string{"-model", model, "-input", good, "-shape", "2,3,16,64", "-out", out}, "want [-1 3 32 32]"},
		{"bad shape syntax", []string{"-model", model, "-input", good, "-shape", "2,3,x,32", "-out", out}, `dimension 2 ("x") is not an integer`},
		{"zero dim", []string{"-model", model, "-input", good, "-shape", "0,3,32,32", "-out", out}, "must be positive"},
		{"missing flag", []string{"-model", model, "-input", good, "-out", out}, "-shape is required"},
		{"negative batch", []string{"-model", model, "-input", good, "-shape", "2,3,32,32", "-out", out, "-batch", "-1"}, "-batch -1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := runInfer(t, c.args...)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("output file written despite the error")
				os.Remove(out)
			}
		})
	}
}
