package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxGrid bounds the number of values a grid range may produce.
const maxGrid = 10000

// ParseGrid parses a parameter grid:
//
//   - a range "START:STOP:STEP" (STEP > 0, START ≤ STOP): START,
//     START+STEP, … up to STOP inclusive, leaving out 0 (the identity), so
//     "-90:90:5" is the paper's rotation grid;
//   - a comma-separated list of values ("-30,30"), kept as given.
//
// Values are not range-checked here; whoever builds the scenario (package
// mr's NewScenario) checks them against the action's parameter.
func ParseGrid(spec string) ([]float64, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("scenario: empty grid (want START:STOP:STEP or a comma-separated list)")
	}
	num := func(what, s string) (float64, error) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("scenario: grid %q: %s %q is not a finite number", spec, what, s)
		}
		return v, nil
	}
	if strings.Contains(spec, ":") {
		f := strings.Split(spec, ":")
		if len(f) != 3 {
			return nil, fmt.Errorf("scenario: grid %q: want START:STOP:STEP", spec)
		}
		var v [3]float64
		for i, what := range []string{"START", "STOP", "STEP"} {
			x, err := num(what, f[i])
			if err != nil {
				return nil, err
			}
			v[i] = x
		}
		start, stop, step := v[0], v[1], v[2]
		if step <= 0 {
			return nil, fmt.Errorf("scenario: grid %q: STEP %v must be > 0", spec, step)
		}
		if start > stop {
			return nil, fmt.Errorf("scenario: grid %q: START %v is greater than STOP %v", spec, start, stop)
		}
		n := math.Floor((stop-start)/step*(1+1e-12)) + 1
		if n > maxGrid {
			return nil, fmt.Errorf("scenario: grid %q has %v values, more than the limit %d", spec, n, maxGrid)
		}
		var out []float64
		for i := 0; i < int(n); i++ {
			x := start + float64(i)*step
			// Clean up binary noise (0.30000000000000004 → 0.3).
			x, _ = strconv.ParseFloat(strconv.FormatFloat(x, 'g', 12, 64), 64)
			if math.Abs(x) < step*1e-9 {
				continue
			}
			out = append(out, x)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("scenario: grid %q holds no values other than 0", spec)
		}
		return out, nil
	}
	var out []float64
	for _, s := range strings.Split(spec, ",") {
		x, err := num("value", s)
		if err != nil {
			return nil, err
		}
		out = append(out, x)
	}
	return out, nil
}

// FormatGrid writes a grid the way ParseGrid reads it: "START:STOP:STEP"
// when the values are exactly what that range produces (ascending, evenly
// spaced, 0 left out), otherwise a comma-separated list.
func FormatGrid(grid []float64) string {
	if len(grid) >= 3 {
		spec := FormatValue(grid[0]) + ":" + FormatValue(grid[len(grid)-1]) + ":" + FormatValue(minStep(grid))
		if g, err := ParseGrid(spec); err == nil && equalGrids(g, grid) {
			return spec
		}
	}
	parts := make([]string, len(grid))
	for i, v := range grid {
		parts[i] = FormatValue(v)
	}
	return strings.Join(parts, ",")
}

// minStep returns the smallest positive difference of consecutive values.
func minStep(grid []float64) float64 {
	step := math.Inf(1)
	for i := 1; i < len(grid); i++ {
		if d := grid[i] - grid[i-1]; d > 0 && d < step {
			step = d
		}
	}
	step, _ = strconv.ParseFloat(strconv.FormatFloat(step, 'g', 12, 64), 64)
	return step
}

func equalGrids(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
