package plots

import (
	"bytes"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

func TestHeatMap(t *testing.T) {
	dir := t.TempDir()
	rows := []string{"rotation", "shear", "brightness", "contrast-and-gamma"}
	cols := []string{"random", "cover", "thompson-sampling", "ucb1", "oracle"}
	nan := math.NaN()
	values := [][]float64{
		{0, 0.12, 0.31, 0.27, 0.45},
		{-0.05, 0.02, 0.18, nan, 0.33},
		{-0.42, -0.2, 0.01, 0.09, 0.6},
		{0.003, -0.011, 1.7, -2.5, nan},
	}
	renderTwice(t, dir, "heatmap.png", func(p string) error {
		return HeatMap(p, "Gain over random (pp)", rows, cols, values, -0.5, 0.5)
	})
	checkPNG(t, filepath.Join(dir, "heatmap.png"), 600, 250)
	svg := renderTwice(t, dir, "heatmap.svg", func(p string) error { return HeatMap(p, "", rows, cols, values, 0, 1) })
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("–")) || !bytes.Contains(svg, []byte("0.31")) {
		t.Errorf("heatmap.svg is not a plausible SVG (%d bytes)", len(svg))
	}
	for _, bad := range []struct {
		rows, cols []string
		values     [][]float64
		lo, hi     float64
	}{
		{nil, cols, nil, -1, 1},
		{rows[:1], nil, [][]float64{{}}, -1, 1},
		{rows[:2], cols[:1], [][]float64{{1}}, -1, 1},
		{rows[:1], cols[:2], [][]float64{{1}}, -1, 1},
		{rows[:1], cols[:1], [][]float64{{1}}, 1, 1},
		{rows[:1], cols[:1], [][]float64{{1}}, nan, 1},
		{rows[:1], cols[:1], [][]float64{{1}}, 0, math.Inf(1)},
	} {
		if err := HeatMap(filepath.Join(dir, "bad.png"), "", bad.rows, bad.cols, bad.values, bad.lo, bad.hi); err == nil {
			t.Errorf("HeatMap(%v, %v, %v, %v, %v): no error", bad.rows, bad.cols, bad.values, bad.lo, bad.hi)
		}
	}
}

func TestDivergingColor(t *testing.T) {
	for _, tc := range []struct {
		v, lo, hi float64
		want      string
	}{
		{0, -1, 1, "{247 247 247 255}"},      // the centre
		{1, -1, 1, "{103 0 31 255}"},         // darkest red
		{-1, -1, 1, "{5 48 97 255}"},         // darkest blue
		{5, -1, 1, "{103 0 31 255}"},         // clipped
		{-0.5, -0.5, 2, "{193 221 236 255}"}, // a quarter of the largest magnitude: a quarter of the way from the 2nd to the 3rd blue
		{-3, -0.5, 2, "{193 221 236 255}"},   // clipped at lo
		{math.NaN(), -1, 1, "{187 187 187 255}"},
	} {
		if got := fmt.Sprint(divergingColor(tc.v, tc.lo, tc.hi)); got != tc.want {
			t.Errorf("divergingColor(%v, %v, %v) = %s; want %s", tc.v, tc.lo, tc.hi, got, tc.want)
		}
	}
}

func TestScaleTicks(t *testing.T) {
	for _, tc := range []struct {
		lo, hi float64
		want   string
	}{
		{-0.5, 0.5, "-0.4 -0.2 0.0 0.2 0.4"},
		{0, 1, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{-3, 7, "-2 0 2 4 6"},
		{0.3, 0.35, "0.30 0.31 0.32 0.33 0.34 0.35"},
		{-100, 100, "-100 -50 0 50 100"},
	} {
		var got []string
		for _, tk := range scaleTicks(tc.lo, tc.hi) {
			got = append(got, tk.Label)
		}
		if s := strings.Join(got, " "); s != tc.want {
			t.Errorf("scaleTicks(%v, %v) = %s; want %s", tc.lo, tc.hi, s, tc.want)
		}
	}
}
