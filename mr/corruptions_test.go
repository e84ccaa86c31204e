package mr

import (
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// Every corruption: severity 1–5 builds a relation named NAME:S that keeps
// the image size, leaves its source alone, does not move boxes and gives
// the same bytes twice; bad severities are one-line errors naming the
// relation and the range.
func TestCorruptionRegistry(t *testing.T) {
	ins := corruptionEntries()
	if len(ins) == 0 {
		t.Fatal("no corruptions registered")
	}
	srcs := []rgb.Image{goldentest.RandomImage(32, 32, 1), goldentest.RandomImage(37, 29, 2), goldentest.RandomImage(1, 1, 3)}
	for _, in := range ins {
		if in.Param != severity || in.Paper || len(in.Grid) != 5 {
			t.Errorf("%s: registry entry %+v", in.Name, in)
		}
		for s := MinSeverity; s <= MaxSeverity; s++ {
			r, err := New(in.Name, float64(s))
			if err != nil {
				t.Fatal(err)
			}
			if want := scenario.Key(in.Name, float64(s)); r.Name() != want {
				t.Errorf("name %q, want %q", r.Name(), want)
			}
			if p, err := Parse(r.Name()); err != nil || p.Name() != r.Name() {
				t.Errorf("Parse(%q) = %v, %v", r.Name(), p, err)
			}
			for _, src := range srcs {
				keep := src.Clone()
				a, b := r.Apply(src), r.Apply(src)
				if a.W != src.W || a.H != src.H || a.Validate() != nil {
					t.Errorf("%s on %dx%d: got %dx%d", r.Name(), src.W, src.H, a.W, a.H)
				}
				if !a.Equal(b) {
					t.Errorf("%s on %dx%d: two applications differ", r.Name(), src.W, src.H)
				}
				if !src.Equal(keep) {
					t.Errorf("%s modified its source", r.Name())
				}
			}
			boxes := []rgb.Box{{X: 1, Y: 2, W: 3, H: 4}}
			if got := r.ApplyBoxes(boxes, 32, 32); len(got) != 1 || got[0] != boxes[0] {
				t.Errorf("%s moved boxes: %v", r.Name(), got)
			}
		}
		for _, bad := range []string{"0", "6", "2.5", "-1", "NaN"} {
			_, err := Parse(in.Name + ":" + bad)
			want := "mr: " + in.Name + ": severity " + bad + " is out of range: want a whole number in [1, 5]"
			if err == nil || err.Error() != want {
				t.Errorf("Parse(%s:%s) error = %v, want %q", in.Name, bad, err, want)
			}
		}
		if _, err := Parse(in.Name); err == nil || !strings.Contains(err.Error(), "needs a severity in level in [1, 5]") {
			t.Errorf("Parse(%s) error = %v", in.Name, err)
		}
	}
}

// The corruptions scenarios: one arm per corruption with a severity
// bandit (objective unit: severity s earns 10000/2^(s−1)), and the flat
// one with an arm per corruption and severity (halving).
func TestCorruptionScenarios(t *testing.T) {
	n := len(corruptionEntries())
	h, f := Corruptions(), CorruptionsFlat()
	for _, s := range []scenario.Scenario{h, f} {
		if err := Check(s); err != nil {
			t.Fatal(err)
		}
	}
	if len(h.Arms) != n || len(h.Variants()) != 5*n || h.Objective.Name != "unit" {
		t.Errorf("corruptions: %d arms, %d variants, %s", len(h.Arms), len(h.Variants()), h.Objective.Name)
	}
	if len(f.Arms) != 5*n || f.Objective.Name != "halving" || strings.Join(f.Keys(), " ") != strings.Join(h.Keys(), " ") {
		t.Errorf("corruptions-flat: %d arms, %s, keys %v", len(f.Arms), f.Objective.Name, f.Keys())
	}
	for p, want := range []float64{10000, 5000, 2500, 1250, 625} {
		if got := h.ParamReward(0, p); got != want {
			t.Errorf("severity %d param reward %v, want %v", p+1, got, want)
		}
		if got := f.MainReward(p); got != want {
			t.Errorf("flat severity %d reward %v, want %v", p+1, got, want)
		}
	}
	for _, name := range []string{"corruptions", "corruptions-flat"} {
		s, err := Builtin(name)
		if err != nil || s.Name != name || BuiltinDoc(name) == "" {
			t.Errorf("Builtin(%s) = %v, %v", name, s.Name, err)
		}
	}
}
