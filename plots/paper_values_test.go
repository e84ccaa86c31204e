package plots

import (
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// Table 1's averages are consistent with its cells wherever the paper is:
// the Avg. column is the mean over the ten classes, the Avg. row the mean
// over the seven MRs, and the corner the mean of the Avg. column (all to
// the paper's rounding, ±0.01).
func TestPaperTable1Consistent(t *testing.T) {
	rows := PaperTable1()
	if len(rows) != 7 {
		t.Fatalf("%d rows", len(rows))
	}
	avgRow, overall := PaperTable1AvgRow()
	var corner float64
	for _, r := range rows {
		var s float64
		for _, v := range r.Classes {
			s += v
		}
		if d := math.Abs(s/10 - r.Avg); d > 0.01 {
			t.Errorf("%s: mean over classes %.3f, paper's Avg. %.2f", r.Label, s/10, r.Avg)
		}
		corner += r.Avg / 7
	}
	for c := range avgRow {
		var s float64
		for _, r := range rows {
			s += r.Classes[c] / 7
		}
		if d := math.Abs(s - avgRow[c]); d > 0.01 {
			t.Errorf("%s: mean over MRs %.3f, paper's Avg. %.2f", CIFAR10Classes()[c], s, avgRow[c])
		}
	}
	if math.Abs(corner-overall) > 0.01 {
		t.Errorf("overall %.3f, paper %.2f", corner, overall)
	}
	// The text's numbers agree with the table (line 613: automobile Flip U/D).
	if rows[2].MR != "flipud" || rows[2].Classes[1] != 74.6 {
		t.Errorf("Flip U/D automobile %v", rows[2].Classes[1])
	}
	for _, r := range PaperTable2() {
		if !(r.Agent < r.Random && r.Random < r.Unmodified && r.RuntimeRandomS < r.RuntimeAgentS) {
			t.Errorf("table 2 row %+v is not ordered as the paper says", r)
		}
	}
}

// The transcribed values appear on the cited lines of the paper's source.
func TestPaperValuesMatchTex(t *testing.T) {
	dir := sharedpath.ForTest(t, "paper")
	b, err := os.ReadFile(filepath.Join(dir, "adaptive-metamorphic-testing.tex"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	numbers := func(line int) []float64 {
		var out []float64
		for _, f := range strings.FieldsFunc(lines[line-1], func(r rune) bool { return r == '&' || r == '\\' || r == ' ' }) {
			if v, err := strconv.ParseFloat(f, 64); err == nil {
				out = append(out, v)
			}
		}
		return out
	}
	eq := func(line int, want []float64) {
		t.Helper()
		got := numbers(line)
		if len(got) != len(want) {
			t.Errorf("line %d: numbers %v, want %v", line, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("line %d: numbers %v, want %v", line, got, want)
				return
			}
		}
	}
	if !strings.Contains(lines[625], "Airplane") || !strings.Contains(lines[625], "Truck") {
		t.Errorf("line 626 is not Table 1's header: %q", lines[625])
	}
	for i, r := range PaperTable1() {
		line := 628 + i
		if !strings.HasPrefix(lines[line-1], r.Label) {
			t.Errorf("line %d does not start with %q: %q", line, r.Label, lines[line-1])
		}
		eq(line, append(r.Classes[:], r.Avg))
	}
	avg, overall := PaperTable1AvgRow()
	eq(635, append(avg[:], overall))
	for i, r := range PaperTable2() {
		eq(789+i, []float64{r.RuntimeAgentS, r.RuntimeRandomS, r.Unmodified, r.Agent, r.Random})
	}
	for _, c := range PaperClaims() {
		l := lines[c.Line-1]
		for _, key := range map[string][]string{
			"setup": {"10,000 iterations", "5,000 iterations"}, "variants": {"59 different transformations"},
			"flipud-over-50": {"Flip U/D", "$50$"}, "flipud-automobile": {"$74.6$"}, "fliplr-least": {"Flip L/R", "least effective"},
			"agent-exceeds-baseline": {"exceeds them for all MRs, except Rotation"}, "rotation-10deg": {"more than 10\\%", "at least 10 degrees"},
			"detection-70": {"over 70\\%", "four of the seven"}, "detection-rotation-most": {"Rotation is the most effective MR"},
			"detection-lowest": {"Flip L/R, Blur and Grayscale have the lowest violation rate"},
		}[c.ID] {
			if !strings.Contains(l, key) {
				t.Errorf("claim %s: line %d lacks %q: %q", c.ID, c.Line, key, l)
			}
		}
	}
}
