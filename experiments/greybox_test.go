package experiments

import (
	"math"
	"slices"
	"testing"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut"
)

// The classification block is the softmax of the logits and the top-1 −
// top-2 logit margin.
func TestClassSutFeatures(t *testing.T) {
	got, err := classSutFeatures([]float32{1, 3, 2})
	if err != nil {
		t.Fatal(err)
	}
	e := []float64{math.Exp(-2), 1, math.Exp(-1)}
	sum := e[0] + e[1] + e[2]
	want := []float32{float32(e[0] / sum), float32(e[1] / sum), float32(e[2] / sum), 1}
	if !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// Huge logits do not overflow; a tie has margin 0; one class has margin 0.
	if got, _ := classSutFeatures([]float32{1e30, 1e30}); !slices.Equal(got, []float32{0.5, 0.5, 0}) {
		t.Errorf("tie: %v", got)
	}
	if got, _ := classSutFeatures([]float32{-4}); !slices.Equal(got, []float32{1, 0}) {
		t.Errorf("one class: %v", got)
	}
	for _, bad := range [][]float32{nil, {1, float32(math.NaN())}, {float32(math.Inf(1)), 0}} {
		if _, err := classSutFeatures(bad); err == nil {
			t.Errorf("logits %v: no error", bad)
		}
	}
}

// The detection block, by hand for a 100×50 image.
func TestDetectionSutFeatures(t *testing.T) {
	dets := []sut.Detection{
		{CategoryID: 1, Score: 0.9, Box: rgb.Box{W: 10, H: 50}},  // area 0.1
		{CategoryID: 1, Score: 0.3, Box: rgb.Box{W: 50, H: 50}},  // area 0.5
		{CategoryID: 7, Score: 0.6, Box: rgb.Box{W: 100, H: 30}}, // area 0.6
		{CategoryID: 3, Score: 0.2, Box: rgb.Box{W: 100, H: 50}},
		{CategoryID: 3, Score: 0.06},
		{CategoryID: 4, Score: 0.04},
	}
	got, err := detectionSutFeatures(dets, 100, 50)
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{2, 3, 0.9, float32((0.9 + 0.6 + 0.3 + 0.2 + 0.06) / 5), 2, float32((0.1 + 0.5 + 0.6) / 3), float32(math.Log(6))}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Errorf("value %d: got %v, want %v (all: %v)", i, got[i], want[i], got)
		}
	}
	if got, _ := detectionSutFeatures(nil, 10, 10); !slices.Equal(got, make([]float32, detectionSutDim)) {
		t.Errorf("no detections: %v", got)
	}
	if _, err := detectionSutFeatures([]sut.Detection{{Score: math.NaN()}}, 10, 10); err == nil {
		t.Error("NaN score: no error")
	}
	if _, err := detectionSutFeatures(nil, 0, 10); err == nil {
		t.Error("empty image: no error")
	}
}
