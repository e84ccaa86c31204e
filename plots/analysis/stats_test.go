package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// The reference values below were computed offline by
// testdata/stats_reference.py with numpy 1.24.2 and SciPy 1.10.1
// (scipy.stats.t.ppf, ttest_rel with confidence_interval, wilcoxon,
// permutation_test); the script prints these literals.

func nearRel(got, want, rel float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= rel*math.Max(1e-300, math.Abs(want))
}

func TestMeanCIReference(t *testing.T) {
	for _, tc := range []struct {
		xs                    []float64
		level, mean, sd, half float64
	}{
		{[]float64{0.3206, 0.3301, 0.312, 0.3289, 0.3177, 0.325, 0.3199, 0.3342, 0.3085, 0.3233}, 0.95, 0.32202000000000003, 0.00802673311157438, 0.00574197896360291},
		{[]float64{0.45, 0.47}, 0.95, 0.45999999999999996, 0.014142135623730925, 0.12706204736432072},
		{[]float64{0.61, 0.58, 0.66, 0.7, 0.59, 0.63, 0.64, 0.6, 0.67, 0.62, 0.65, 0.61, 0.69, 0.57, 0.66, 0.64, 0.63, 0.62, 0.68, 0.6, 0.61, 0.66, 0.63, 0.64, 0.59, 0.65, 0.62, 0.67, 0.6, 0.63}, 0.95, 0.6316666666666667, 0.03291402943021918, 0.012290300574680547},
		{[]float64{1.0, 2.0, 4.0, 8.0, 16.0}, 0.99, 6.2, 6.099180272790763, 12.558296481306146},
	} {
		c := MeanCI(tc.xs, tc.level)
		if c.N != len(tc.xs) || !nearRel(c.Mean, tc.mean, 1e-12) || !nearRel(c.SD, tc.sd, 1e-12) || !nearRel(c.Half, tc.half, 1e-9) ||
			!nearRel(c.Lo, tc.mean-tc.half, 1e-9) || !nearRel(c.Hi, tc.mean+tc.half, 1e-9) {
			t.Errorf("MeanCI(%v, %v) = %+v; want mean %v, sd %v, half %v", tc.xs, tc.level, c, tc.mean, tc.sd, tc.half)
		}
	}
	if c := MeanCI([]float64{0.4}, 0.95); c.N != 1 || c.Mean != 0.4 || !math.IsNaN(c.Half) || !math.IsNaN(c.Lo) {
		t.Errorf("one value: %+v; want the value and no interval", c)
	}
	if c := MeanCI(nil, 0.95); c.N != 0 {
		t.Errorf("no values: %+v", c)
	}
}

func TestCIShift(t *testing.T) {
	c := MeanCI([]float64{0.2, 0.4}, 0.95).Shift(1)
	if !nearRel(c.Mean, 0.7, 1e-12) || !nearRel(c.Hi-c.Lo, 2*c.Half, 1e-12) || !nearRel(c.Lo, 0.7-c.Half, 1e-12) {
		t.Errorf("Shift: %+v", c)
	}
}

func perSeed(xs []float64) map[uint64]float64 {
	m := map[uint64]float64{}
	for i, x := range xs {
		m[uint64(i+1)] = x
	}
	return m
}

func TestPairedTestReference(t *testing.T) {
	for _, tc := range []struct {
		a, b             []float64
		diff, half, t, p float64
	}{
		{[]float64{0.4554, 0.4411, 0.463, 0.4485, 0.4298, 0.4572, 0.4503, 0.4366, 0.4621, 0.4424}, []float64{0.3206, 0.3301, 0.312, 0.3289, 0.3177, 0.325, 0.3199, 0.3342, 0.3085, 0.3233}, 0.12662, 0.012116324378384474, 23.64036575789135, 2.0682189846728323e-09},
		{[]float64{0.4554, 0.4411, 0.463, 0.4485, 0.4298, 0.4572, 0.4503, 0.4366, 0.4621, 0.4424}, []float64{0.4501, 0.4452, 0.4587, 0.4512, 0.439, 0.4498, 0.453, 0.4402, 0.4556, 0.4469}, -0.00032999999999999143, 0.004072867231240443, -0.18328902498428568, 0.8586339559187701},
		{[]float64{0.52, 0.49, 0.55}, []float64{0.5, 0.5, 0.51}, 0.01666666666666668, 0.06251609479610888, 1.1470786693528088, 0.37005921165128797},
	} {
		p := PairedTest(perSeed(tc.a), perSeed(tc.b), 0.95)
		if len(p.Seeds) != len(tc.a) || !nearRel(p.Diff.Mean, tc.diff, 1e-9) || !nearRel(p.Diff.Half, tc.half, 1e-8) || !nearRel(p.T, tc.t, 1e-8) || !nearRel(p.P, tc.p, 1e-7) {
			t.Errorf("PairedTest(%v, %v) = diff %v ± %v, t %v, p %v; want %v ± %v, t %v, p %v", tc.a, tc.b, p.Diff.Mean, p.Diff.Half, p.T, p.P, tc.diff, tc.half, tc.t, tc.p)
		}
	}
}

// Pairs are made by seed: seeds only one side ran are left out, and the
// map order does not matter.
func TestPairedTestPairsBySeed(t *testing.T) {
	a := map[uint64]float64{3: 0.5, 1: 0.4, 2: 0.45, 9: 0.9}
	b := map[uint64]float64{1: 0.3, 2: 0.35, 3: 0.42, 7: 0.1}
	p := PairedTest(a, b, 0.95)
	if len(p.Seeds) != 3 || p.Seeds[0] != 1 || p.Seeds[2] != 3 {
		t.Fatalf("seeds %v; want [1 2 3]", p.Seeds)
	}
	want := MeanCI([]float64{0.4 - 0.3, 0.45 - 0.35, 0.5 - 0.42}, 0.95)
	if !nearRel(p.Diff.Mean, want.Mean, 1e-12) || !nearRel(p.Diff.Half, want.Half, 1e-12) {
		t.Errorf("diff %+v; want %+v", p.Diff, want)
	}
}

func TestPairedTestDegenerate(t *testing.T) {
	same := PairedTest(perSeed([]float64{0.3, 0.4, 0.5}), perSeed([]float64{0.3, 0.4, 0.5}), 0.95)
	if same.P != 1 || !math.IsNaN(same.T) || !math.IsNaN(same.WilcoxonP) || same.Diff.Mean != 0 {
		t.Errorf("identical: %+v; want p 1, no t, no Wilcoxon p", same)
	}
	shifted := PairedTest(perSeed([]float64{0.5, 0.5, 0.5}), perSeed([]float64{0.25, 0.25, 0.25}), 0.95)
	if shifted.P != 0 || !math.IsInf(shifted.T, 1) {
		t.Errorf("constant difference: %+v; want p 0, t +Inf", shifted)
	}
	one := PairedTest(map[uint64]float64{1: 0.5}, map[uint64]float64{1: 0.2}, 0.95)
	if !math.IsNaN(one.P) || !math.IsNaN(one.T) || one.Diff.Mean != 0.3 {
		t.Errorf("one pair: %+v; want the difference and no test", one)
	}
	none := PairedTest(map[uint64]float64{1: 0.5}, map[uint64]float64{2: 0.2}, 0.95)
	if len(none.Seeds) != 0 || !math.IsNaN(none.P) {
		t.Errorf("no common seed: %+v", none)
	}
}

func TestWilcoxonReference(t *testing.T) {
	for _, tc := range []struct {
		d []float64
		p float64
	}{
		// Exact, no ties or zeros (scipy.stats.wilcoxon, method='exact').
		{[]float64{0.1349, 0.111, 0.151, 0.1196, 0.1121, 0.1322, 0.1304, 0.1024, 0.1536, 0.1191}, 0.001953125},
		{[]float64{0.0053, -0.0041, 0.0043, -0.0027, -0.0092, 0.0074, -0.0026000000000000003, -0.0036, 0.0065, -0.0045}, 0.921875},
		{[]float64{1.5, -2.25, 3.125, 4.0625, -5.5, 6.75, 7.875, -8.125, 9.0625, 10.5, -11.25, 12.125}, 0.33935546875},
		{[]float64{-0.3, 0.1}, 1.0},
		// Ties and zeros (permutation_test over every sign flip of the
		// mid-ranks, zeros dropped).
		{[]float64{0.01, -0.01, 0.02, 0.02, 0.0, 0.03, -0.02, 0.01, 0.04, 0.0}, 0.1640625},
		{[]float64{1.0, 1.0, 1.0, 2.0, 2.0, -3.0, 3.0, 4.0, 4.0, 4.0, -5.0, 6.0}, 0.1044921875},
		{[]float64{2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0}, 0.001953125},
		// 59 non-zero differences: the normal approximation with the tie
		// correction (scipy.stats.wilcoxon, method='approx', correction=False).
		{[]float64{0.3, 0.6, 0.0, -0.6, -0.2, -0.7, 0.4, 1.6, -0.2, -0.3, 0.8, 0.7, 0.4, -0.6, 0.3, 1.0, -1.0, -0.2, -1.6, -1.0, -1.5, 0.1, -1.0, 0.6, 0.5, 0.1, -2.2, -0.2, 0.3, 0.4, -1.2, -0.2, -0.7, -0.5, 1.4, -0.5, 0.3, 1.2, -0.3, 0.2, 0.4, 0.4, -0.9, 0.4, 1.7, -1.2, 1.2, 0.4, -0.3, 2.3, 1.1, -0.9, 0.4, 0.9, 0.1, 1.0, 0.2, 1.0, 1.7, -0.4}, 0.34877545777274277},
	} {
		if got := WilcoxonSignedRank(tc.d); !nearRel(got, tc.p, 1e-9) {
			t.Errorf("WilcoxonSignedRank(%v) = %v; want %v", tc.d, got, tc.p)
		}
	}
	if p := WilcoxonSignedRank([]float64{0, 0}); !math.IsNaN(p) {
		t.Errorf("all zero: %v; want NaN", p)
	}
}

func TestHolm(t *testing.T) {
	// By hand: sorted 0.005 (×4 = 0.02), 0.01 (×3 = 0.03), 0.03 (×2 =
	// 0.06), 0.04 (×1 = 0.04, raised to the running maximum 0.06); the
	// NaN is not a test.
	got := Holm([]float64{0.01, 0.04, math.NaN(), 0.03, 0.005})
	want := []float64{0.03, 0.06, math.NaN(), 0.06, 0.02}
	for i := range want {
		if !nearRel(got[i], want[i], 1e-12) {
			t.Errorf("Holm: %v; want %v", got, want)
			break
		}
	}
	if got := Holm([]float64{0.5, 0.9}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm caps at 1: %v", got)
	}
}

func TestSeedRates(t *testing.T) {
	m, err := SeedRates([]record.Run{{Seed: 2, Iterations: 4, Violations: 1}, {Seed: 1, Iterations: 2, Violations: 2}, {Seed: 5}})
	if err != nil || len(m) != 2 || m[2] != 0.25 || m[1] != 1 {
		t.Errorf("SeedRates: %v, %v", m, err)
	}
	if v := Values(m); len(v) != 2 || v[0] != 1 || v[1] != 0.25 {
		t.Errorf("Values: %v; want seed order", v)
	}
	if _, err := SeedRates([]record.Run{{Seed: 1, Iterations: 1}, {Seed: 1, Iterations: 1}}); err == nil {
		t.Error("two runs of one seed: no error")
	}
}

// CompareAgents pairs by seed, tests every agent against each reference
// present, and adjusts the whole family together.
func TestCompareAgents(t *testing.T) {
	runs := func(v ...int) []record.Run {
		var out []record.Run
		for i, x := range v {
			out = append(out, record.Run{Seed: uint64(i + 1), Iterations: 100, Violations: x})
		}
		return out
	}
	c, err := CompareAgents([]NamedRuns{
		{"a", runs(50, 52, 55, 49, 51)},
		{"cover", runs(45, 47, 46, 44, 48)},
		{"random", runs(30, 33, 31, 29, 32)},
	}, []string{"random", "cover", "absent"}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Agents) != 3 || !nearRel(c.Agents[0].CI.Mean, 0.514, 1e-12) {
		t.Fatalf("agents %+v", c.Agents)
	}
	var got []string
	var ps []float64
	for _, p := range c.Tests {
		got = append(got, p.Agent+" vs "+p.Reference)
		ps = append(ps, p.P)
		want := PairedTest(c.Agents[map[string]int{"a": 0, "cover": 1, "random": 2}[p.Agent]].Rates, c.Agents[map[string]int{"cover": 1, "random": 2}[p.Reference]].Rates, 0.95)
		if p.P != want.P || p.Diff != want.Diff {
			t.Errorf("%s vs %s: %+v; want %+v", p.Agent, p.Reference, p.Paired, want)
		}
	}
	if want := "[a vs random cover vs random a vs cover]"; fmt.Sprint(got) != want {
		t.Errorf("tests %v; want %s", got, want)
	}
	h := Holm(ps)
	for i, p := range c.Tests {
		if p.PHolm != h[i] || p.PHolm < p.P {
			t.Errorf("%s vs %s: Holm p %v; want %v (≥ p %v)", p.Agent, p.Reference, p.PHolm, h[i], p.P)
		}
	}
	if !c.Tests[0].Significant(0.05) {
		t.Errorf("a vs random (+20 pp on every seed) not significant: %+v", c.Tests[0])
	}
	if _, err := CompareAgents([]NamedRuns{{"a", nil}, {"a", nil}}, nil, 0.95); err == nil {
		t.Error("an agent given twice: no error")
	}
}

func TestRegressionStatsAndTests(t *testing.T) {
	runs := func(before, after, window []int) []record.RegressionRun {
		var out []record.RegressionRun
		for i := range before {
			out = append(out, record.RegressionRun{Seed: uint64(i + 1),
				Before: record.Counts{Count: 100, Violations: before[i]}, After: record.Counts{Count: 100, Violations: after[i]},
				AfterWindow: record.Counts{Count: 10, Violations: window[i]}})
		}
		return out
	}
	r := record.Regression{Switch: 100, Window: 10, Agents: []record.RegressionAgent{
		{ID: "random-carried", Agent: "random", State: record.Carried, Runs: runs([]int{30, 31, 32}, []int{35, 34, 36}, []int{3, 4, 3})},
		{ID: "random-fresh", Agent: "random", State: record.Fresh, Runs: runs([]int{30, 31, 32}, []int{35, 34, 36}, []int{3, 4, 3})},
		{ID: "ts-carried", Agent: "ts", State: record.Carried, Runs: runs([]int{50, 52, 51}, []int{60, 58, 61}, []int{7, 8, 6})},
		{ID: "ts-fresh", Agent: "ts", State: record.Fresh, Runs: runs([]int{50, 52, 51}, []int{52, 50, 55}, []int{3, 4, 4})},
	}}
	st, err := RegressionStats(r, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 4 || !nearRel(st[2].AfterCI.Mean, (0.60+0.58+0.61)/3, 1e-12) || !nearRel(st[2].WindowCI.Mean, 0.7, 1e-12) || !nearRel(st[3].BeforeCI.Mean, 0.51, 1e-12) {
		t.Fatalf("stats %+v", st)
	}
	tests := RegressionTests(st, "random", 0.95)
	var got []string
	for _, x := range tests {
		got = append(got, x.Metric+":"+x.Agent+"/"+x.Reference)
	}
	if want := "[window:ts-carried/ts-fresh after:ts-carried/ts-fresh after:ts-carried/random-carried]"; fmt.Sprint(got) != want {
		t.Errorf("tests %v; want %s", got, want)
	}
	if d := tests[0].Diff.Mean; !nearRel(d, 0.7-(0.3+0.4+0.4)/3, 1e-12) {
		t.Errorf("window difference %v", d)
	}
	h := Holm([]float64{tests[0].P, tests[1].P, tests[2].P})
	for i := range tests {
		if tests[i].PHolm != h[i] {
			t.Errorf("Holm %v; want %v", tests[i].PHolm, h[i])
		}
	}
}

func TestWindowRates(t *testing.T) {
	p := Progress{Iterations: []int{10, 20, 25}, Violations: []Spread{{Mean: 2}, {Mean: 7}, {Mean: 7}}}
	ends, rates := WindowRates(p)
	if fmt.Sprint(ends) != "[10 20 25]" || fmt.Sprint(rates) != "[0.2 0.5 0]" {
		t.Errorf("WindowRates: %v %v", ends, rates)
	}
}
