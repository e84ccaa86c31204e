package analysis

import (
	"math"
	"testing"
)

// Reference values: scipy.stats.binomtest(x, n).proportion_ci(level,
// method='wilson' and 'exact') with SciPy 1.10.1, printed by
// testdata/ranks_reference.py.
func TestBinomialIntervalsReference(t *testing.T) {
	for _, tc := range []struct {
		x, n                 int
		level                float64
		wLo, wHi, cpLo, cpHi float64
	}{
		{0, 10, 0.95, 0.0, 0.27753279986288926, 0.0, 0.30849710781876294},
		{1, 10, 0.95, 0.017876213095072896, 0.4041500267952385, 0.0025285785444625728, 0.44501611702819543},
		{5, 10, 0.95, 0.236593090512564, 0.7634069094874361, 0.1870860284474045, 0.8129139715525955},
		{10, 10, 0.95, 0.7224672001371109, 1.0, 0.6915028921812371, 1.0},
		{3, 7, 0.9, 0.18644319036395607, 0.7105229089864071, 0.1287563928042363, 0.7746784159675543},
		{37, 120, 0.95, 0.23272736988916295, 0.3958299772380067, 0.2272551196338485, 0.3991367645324066},
		{981, 1000, 0.99, 0.9663012567415561, 0.9893580426213666, 0.9668570333147256, 0.9903149407136549},
		{1, 1, 0.95, 0.20654931437723745, 1.0, 0.025000000000000022, 1.0},
		{0, 1, 0.95, 0.0, 0.7934506856227626, 0.0, 0.975},
		{450, 1000, 0.95, 0.41941538407429674, 0.48096729177425873, 0.41885170967995056, 0.48144346662340676},
		{2, 500, 0.95, 0.0010976305226827908, 0.014465715215177033, 0.00048478617610388795, 0.014374078562200318},
	} {
		lo, hi := Wilson(tc.x, tc.n, tc.level)
		if !nearRel(lo, tc.wLo, 1e-10) || !nearRel(hi, tc.wHi, 1e-10) {
			t.Errorf("Wilson(%d, %d, %v) = (%v, %v); want (%v, %v)", tc.x, tc.n, tc.level, lo, hi, tc.wLo, tc.wHi)
		}
		lo, hi = ClopperPearson(tc.x, tc.n, tc.level)
		if !nearRel(lo, tc.cpLo, 1e-9) || !nearRel(hi, tc.cpHi, 1e-9) {
			t.Errorf("ClopperPearson(%d, %d, %v) = (%v, %v); want (%v, %v)", tc.x, tc.n, tc.level, lo, hi, tc.cpLo, tc.cpHi)
		}
		// The exact interval is the wider one at the ends.
		if tc.x > 0 && tc.x < tc.n {
			wlo, whi := Wilson(tc.x, tc.n, tc.level)
			if lo > wlo && hi < whi {
				t.Errorf("(%d, %d): exact (%v, %v) inside Wilson (%v, %v)", tc.x, tc.n, lo, hi, wlo, whi)
			}
		}
	}
}

func TestBinomialIntervalsEdges(t *testing.T) {
	for name, f := range map[string]func(int, int, float64) (float64, float64){"Wilson": Wilson, "ClopperPearson": ClopperPearson} {
		if lo, hi := f(0, 0, 0.95); lo != 0 || hi != 1 {
			t.Errorf("%s(0, 0) = (%v, %v); want (0, 1)", name, lo, hi)
		}
		if lo, _ := f(0, 20, 0.95); lo != 0 {
			t.Errorf("%s(0, 20): lo %v; want 0", name, lo)
		}
		if _, hi := f(20, 20, 0.95); hi != 1 {
			t.Errorf("%s(20, 20): hi %v; want 1", name, hi)
		}
		for _, bad := range []struct {
			x, n  int
			level float64
		}{{-1, 5, 0.95}, {6, 5, 0.95}, {2, 5, 0}, {2, 5, 1}, {2, 5, math.NaN()}} {
			if lo, hi := f(bad.x, bad.n, bad.level); !math.IsNaN(lo) || !math.IsNaN(hi) {
				t.Errorf("%s(%d, %d, %v) = (%v, %v); want NaN", name, bad.x, bad.n, bad.level, lo, hi)
			}
		}
	}
}
