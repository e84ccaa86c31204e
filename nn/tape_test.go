package nn

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"
)

// TestTapeGorgoniaVersion fails when go.mod's gorgonia changes: tape
// calls its unexported run loop, whose signature must then be checked
// against the new source (and tapeGorgonia updated).
func TestTapeGorgoniaVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
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
	if v := string(m[1]); v != tapeGorgonia {
		t.Fatalf("go.mod requires gorgonia.org/gorgonia %s; tape.go calls (*tapeMachine).runall of %s: check its signature and update tapeGorgonia", v, tapeGorgonia)
	}
}

// TestTapeDirect checks that a model's machine runs through the direct
// run loop (not silently through RunAll), with the same results as
// RunAll, run after run.
func TestTapeDirect(t *testing.T) {
	load := func() *Model {
		m, err := LoadBytes(smallNet().Bytes(), "smallnet")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	direct, viaRunAll := load(), load()
	for _, batch := range []int{1, 3} {
		// Build the graphs each batch size runs on.
		for _, m := range []*Model{direct, viaRunAll} {
			if _, err := m.Run(randInput([]int{batch, 3, 16, 16}, 9)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for n, inst := range direct.insts {
		if inst.tape.m == nil {
			t.Fatalf("graph for %d: the machine (%T) is not run directly", n, inst.vm)
		}
	}
	for _, inst := range viaRunAll.insts {
		inst.tape.m = nil
	}
	for _, batch := range []int{1, 3} {
		for run := range 3 {
			x := randInput([]int{batch, 3, 16, 16}, uint64(run))
			a, err := direct.Run(x)
			if err != nil {
				t.Fatal(err)
			}
			b, err := viaRunAll.Run(x)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a[0].Data().([]float32), b[0].Data().([]float32)) {
				t.Fatalf("batch %d, run %d: direct run %v, RunAll %v", batch, run, a[0].Data(), b[0].Data())
			}
		}
	}
}
