package tape

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestGorgoniaVersion fails when go.mod's gorgonia changes: Runner calls
// its unexported run loop, whose signature must then be checked against
// the new source (and Gorgonia updated).
func TestGorgoniaVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	if regexp.MustCompile(`(?m)^\s*(replace\s+)?gorgonia\.org/gorgonia\b.*=>`).Match(mod) {
		t.Fatal("go.mod replaces gorgonia.org/gorgonia: check tape.go's call of (*tapeMachine).runall against it")
	}
	m := regexp.MustCompile(`(?m)^\s*gorgonia\.org/gorgonia (\S+)`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("go.mod does not require gorgonia.org/gorgonia")
	}
	if v := string(m[1]); v != Gorgonia {
		t.Fatalf("go.mod requires gorgonia.org/gorgonia %s; tape.go calls (*tapeMachine).runall of %s: check its signature and update Gorgonia", v, Gorgonia)
	}
}

// machine builds y = tanh(W·x + b) and a tape machine for it.
func machine(t *testing.T, x *tensor.Dense) (gorgonia.VM, *gorgonia.Node) {
	g := gorgonia.NewGraph()
	w := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(3, 4), gorgonia.WithName("w"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3, 4), tensor.WithBacking([]float32{.1, -.2, .3, .4, -.5, .6, .7, -.8, .9, 1, -1.1, 1.2}))))
	b := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(3), gorgonia.WithName("b"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(3), tensor.WithBacking([]float32{.01, .02, -.03}))))
	xn := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(4), gorgonia.WithName("x"), gorgonia.WithValue(x))
	y := gorgonia.Must(gorgonia.Tanh(gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Mul(w, xn)), b))))
	return gorgonia.NewTapeMachine(g), y
}

// TestRun checks that a tape machine runs directly (not silently through
// RunAll), with RunAll's results, run after run.
func TestRun(t *testing.T) {
	x1, x2 := tensor.New(tensor.WithShape(4), tensor.WithBacking([]float32{1, 2, 3, 4})),
		tensor.New(tensor.WithShape(4), tensor.WithBacking([]float32{1, 2, 3, 4}))
	vm1, y1 := machine(t, x1)
	vm2, y2 := machine(t, x2)
	defer vm1.Close()
	defer vm2.Close()
	r := New(vm1)
	if !r.Direct() {
		t.Fatalf("a %T does not run directly", vm1)
	}
	var last []float32
	for run := range 3 {
		for i := range 4 {
			v := float32(run*4+i) * 0.25
			x1.Data().([]float32)[i], x2.Data().([]float32)[i] = v, v
		}
		if err := r.Run(); err != nil {
			t.Fatal(err)
		}
		if err := vm2.RunAll(); err != nil {
			t.Fatal(err)
		}
		a, b := y1.Value().Data().([]float32), y2.Value().Data().([]float32)
		if !slices.Equal(a, b) {
			t.Fatalf("run %d: direct %v, RunAll %v", run, a, b)
		}
		if slices.Equal(a, last) {
			t.Fatalf("run %d: the same output as the run before, %v, from a new input", run, a)
		}
		last = slices.Clone(a)
		vm1.Reset()
		vm2.Reset()
	}
}
