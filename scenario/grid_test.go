package scenario

import (
	"slices"
	"strings"
	"testing"
)

// rot and shear are the paper's grids: −90…90 and −45…45 in steps of 5, without 0.
var (
	rot   = steps(-90, 90, 5)
	shear = steps(-45, 45, 5)
)

func steps(start, stop, step int) []float64 {
	var out []float64
	for v := start; v <= stop; v += step {
		if v != 0 {
			out = append(out, float64(v))
		}
	}
	return out
}

func TestParseGrid(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want []float64
	}{
		{"-90:90:5", rot},
		{"-45:45:5", shear},
		{"0:1:0.1", []float64{0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1}},
		{"10:20:4", []float64{10, 14, 18}},
		{"-30, 30", []float64{-30, 30}},
		{"0", []float64{0}},
		{"7", []float64{7}},
	} {
		got, err := ParseGrid(tc.spec)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseGrid(%q) = %v, %v; want %v", tc.spec, got, err, tc.want)
		}
	}
	if len(rot) != 36 || len(shear) != 18 {
		t.Errorf("grids have %d and %d values, want 36 and 18", len(rot), len(shear))
	}
	for _, tc := range []struct{ spec, want string }{
		{"", "empty grid"},
		{"1:2", "START:STOP:STEP"},
		{"1:2:0", "STEP 0 must be > 0"},
		{"5:1:1", "START 5 is greater than STOP 1"},
		{"0:0:1", "no values other than 0"},
		{"a:2:1", `START "a" is not a finite number`},
		{"1,x", `value "x" is not a finite number`},
		{"0:1e9:0.001", "more than the limit"},
		{"1,NaN", "not a finite number"},
	} {
		if _, err := ParseGrid(tc.spec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseGrid(%q) error = %v, want %q", tc.spec, err, tc.want)
		}
	}
}

func TestFormatGrid(t *testing.T) {
	for _, tc := range []struct {
		grid []float64
		want string
	}{
		{rot, "-90:90:5"},
		{shear, "-45:45:5"},
		{[]float64{-30, 30}, "-30,30"},
		{[]float64{1, 2, 4}, "1,2,4"},
		{[]float64{0, 5, 10}, "0,5,10"}, // a range never yields 0
		{[]float64{0.1, 0.2, 0.3}, "0.1:0.3:0.1"},
		{nil, ""},
	} {
		got := FormatGrid(tc.grid)
		if got != tc.want {
			t.Errorf("FormatGrid(%v) = %q, want %q", tc.grid, got, tc.want)
		}
		if len(tc.grid) > 0 {
			if back, err := ParseGrid(got); err != nil || !slices.Equal(back, tc.grid) {
				t.Errorf("ParseGrid(FormatGrid(%v)) = %v, %v", tc.grid, back, err)
			}
		}
	}
}

// FuzzParseGrid: ParseGrid never panics and FormatGrid round-trips what it
// accepts.
func FuzzParseGrid(f *testing.F) {
	for _, s := range []string{"-90:90:5", "0:1:0.1", "-30,30", "1:2:0", "1e308:1e308:1", "-1e300:1e300:1e297"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		g, err := ParseGrid(spec)
		if err != nil {
			return
		}
		if len(g) == 0 || len(g) > maxGrid && len(g) > len(spec) {
			t.Fatalf("ParseGrid(%q) returned %d values", spec, len(g))
		}
		back, err := ParseGrid(FormatGrid(g))
		if err != nil || !slices.Equal(back, g) {
			t.Fatalf("ParseGrid(FormatGrid(%v)) = %v, %v", g, back, err)
		}
	})
}
