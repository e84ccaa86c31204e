package mr

import (
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

func TestBrightness(t *testing.T) {
	src := goldentest.RandomImage(7, 5, 3)
	for _, d := range []int{-255, -40, -1, 0, 1, 40, 255} {
		r, err := New("brightness", float64(d))
		if err != nil {
			t.Fatal(err)
		}
		got := r.Apply(src)
		for i, v := range src.Pix {
			want := min(max(int(v)+d, 0), 255)
			if int(got.Pix[i]) != want {
				t.Fatalf("brightness:%d: value %d is %d, want %d (saturating %d%+d)", d, i, got.Pix[i], want, v, d)
			}
		}
	}
	if !mustParse(t, "brightness:0").Apply(src).Equal(src) {
		t.Error("brightness:0 is not the identity")
	}
	// Opposite deltas undo each other where nothing saturates.
	mid := rgb.New(4, 4)
	for i := range mid.Pix {
		mid.Pix[i] = uint8(60 + i)
	}
	if !mustParse(t, "brightness:50,brightness:-50").Apply(mid).Equal(mid) {
		t.Error("brightness:50 then -50 changed unsaturated values")
	}
	// Boxes do not move.
	boxes := []rgb.Box{{X: 1, Y: 2, W: 3, H: 4}}
	if got := (Brightness{Delta: 30}).ApplyBoxes(boxes, 10, 10); len(got) != 1 || got[0] != boxes[0] {
		t.Errorf("boxes moved: %v", got)
	}
	for _, tc := range []struct{ spec, want string }{
		{"brightness", "needs a delta in levels in [-255, 255]"},
		{"brightness:300", "out of range: want a whole number in [-255, 255]"},
		{"brightness:2.5", "whole number"},
		{"brightness:x", `delta "x" is not a number`},
	} {
		if _, err := Parse(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %v, want %q", tc.spec, err, tc.want)
		}
	}
	if r := mustParse(t, "Brightness:-40"); r.Name() != "brightness:-40" || r != (Brightness{Delta: -40}) {
		t.Errorf("parsed %v", r)
	}
}

// Brightness works in a user-defined scenario, with its own halving scale
// (10 levels), and is in none of the paper's.
func TestBrightnessScenario(t *testing.T) {
	s, err := NewScenario("light", scenario.Paper, []scenario.Arm{{Action: "blur"}, {Action: "brightness", Values: []float64{-20, 10, 40}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Keys(), " "); got != "blur brightness:-20 brightness:10 brightness:40" {
		t.Errorf("keys %s", got)
	}
	if s.ParamReward(1, 0) != 5000 || s.ParamReward(1, 1) != 10000 || s.ParamReward(1, 2) != 1250 {
		t.Errorf("parameter rewards %v %v %v, want 5000 10000 1250", s.ParamReward(1, 0), s.ParamReward(1, 1), s.ParamReward(1, 2))
	}
	if _, err := NewScenario("x", scenario.Paper, []scenario.Arm{{Action: "brightness", Values: []float64{10, 256}}}); err == nil {
		t.Error("brightness 256 accepted")
	}
	in, _ := Lookup("brightness")
	if in.Paper || !in.Parametric() || in.Param.Unit != "levels" {
		t.Errorf("registry entry %+v", in)
	}
}
