package analysis

import (
	"fmt"
	"math"
	"testing"
)

// The reference values below were computed offline by
// testdata/ranks_reference.py with numpy 1.24.2 and SciPy 1.10.1
// (scipy.stats.rankdata, friedmanchisquare, f.sf, studentized_range.ppf);
// the script prints these literals.

func TestRanks(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		scores       [][]float64
		higherBetter bool
		want         string
	}{
		{[][]float64{{0.3, 0.1, 0.2}}, true, "[[1 3 2]]"},
		{[][]float64{{0.3, 0.1, 0.2}}, false, "[[3 1 2]]"},
		// Ties share the mean of the ranks they span.
		{[][]float64{{0.5, 0.7, 0.5, 0.5, 0.1}}, true, "[[3 1 3 3 5]]"},
		{[][]float64{{2, 2, 1, 1}}, false, "[[3.5 3.5 1.5 1.5]]"},
		{[][]float64{{4, 4, 4}}, true, "[[2 2 2]]"},
		// Each row on its own; a row with a NaN gets NaN ranks.
		{[][]float64{{1, 2}, {2, 1}, {1, nan}}, true, "[[2 1] [1 2] [NaN NaN]]"},
		{nil, true, "[]"},
	} {
		if got := fmt.Sprint(Ranks(tc.scores, tc.higherBetter)); got != tc.want {
			t.Errorf("Ranks(%v, %v) = %s; want %s", tc.scores, tc.higherBetter, got, tc.want)
		}
	}
	if got := fmt.Sprint(MeanRanks([][]float64{{1, 2, 3}, {3, 2, 1}, {1, 3, 2}}, true)); got != "[2.3333333333333335 1.6666666666666667 2]" {
		t.Errorf("MeanRanks = %s", got)
	}
}

func TestFriedmanReference(t *testing.T) {
	for _, tc := range []struct {
		scores              [][]float64
		higherBetter        bool
		meanRanks           []float64
		chiSq, p, fStat, pF float64
	}{
		{[][]float64{[]float64{0.1, 0.5, 0.3}, []float64{0.2, 0.6, 0.25}, []float64{0.15, 0.4, 0.5}, []float64{0.3, 0.7, 0.1}, []float64{0.22, 0.55, 0.35}}, true, []float64{2.8, 1.2, 2.0}, 6.400000000000006, 0.04076220397836611, 7.1111111111111285, 0.016796159999999893},
		{[][]float64{[]float64{1.0, 2.0, 2.0, 4.0}, []float64{3.0, 1.0, 2.0, 2.0}, []float64{1.0, 1.0, 1.0, 2.0}, []float64{4.0, 3.0, 2.0, 1.0}, []float64{2.0, 2.0, 3.0, 1.0}, []float64{1.0, 3.0, 2.0, 4.0}}, false, []float64{2.4166666666666665, 2.3333333333333335, 2.5, 2.75}, 0.3962264150943493, 0.9410209213792443, 0.11254019292604783, 0.9514162161205295},
		{[][]float64{[]float64{0.3, 0.42, 0.46, 0.29, 0.49}, []float64{0.27, 0.38, 0.4, 0.36, 0.41}, []float64{0.38, 0.35, 0.43, 0.31, 0.48}, []float64{0.32, 0.39, 0.39, 0.31, 0.53}, []float64{0.26, 0.27, 0.42, 0.29, 0.4}, []float64{0.26, 0.33, 0.34, 0.25, 0.5}, []float64{0.34, 0.34, 0.36, 0.34, 0.54}, []float64{0.28, 0.38, 0.45, 0.31, 0.46}, []float64{0.32, 0.36, 0.45, 0.26, 0.47}, []float64{0.26, 0.26, 0.41, 0.35, 0.46}, []float64{0.37, 0.39, 0.43, 0.34, 0.55}, []float64{0.23, 0.38, 0.43, 0.23, 0.52}}, true, []float64{4.25, 3.3333333333333335, 1.9583333333333333, 4.375, 1.0833333333333333}, 41.150214592274665, 2.502058161910775e-08, 66.08270676691714, 4.96108349061914e-18},
		{[][]float64{[]float64{5.0, 3.0}, []float64{4.0, 4.5}, []float64{6.0, 1.0}}, false, []float64{1.6666666666666667, 1.3333333333333333}, 0.33333333333333215, 0.5637028616507738, 0.249999999999999, 0.6666666666666666},
	} {
		f, err := FriedmanTest(tc.scores, tc.higherBetter)
		if err != nil {
			t.Fatal(err)
		}
		ok := f.N == len(tc.scores) && f.K == len(tc.scores[0]) && len(f.MeanRanks) == f.K
		for j := range tc.meanRanks {
			ok = ok && nearRel(f.MeanRanks[j], tc.meanRanks[j], 1e-12)
		}
		if !ok || !nearRel(f.ChiSq, tc.chiSq, 1e-10) || !nearRel(f.PChiSq, tc.p, 1e-9) || !nearRel(f.F, tc.fStat, 1e-10) || !nearRel(f.PF, tc.pF, 1e-8) {
			t.Errorf("FriedmanTest(%v) = %+v; want mean ranks %v, chi2 %v (p %v), F %v (p %v)", tc.scores, f, tc.meanRanks, tc.chiSq, tc.p, tc.fStat, tc.pF)
		}
	}
}

func TestFriedmanDegenerate(t *testing.T) {
	// Every row one tie: no evidence of a difference.
	f, err := FriedmanTest([][]float64{{1, 1, 1}, {2, 2, 2}}, true)
	if err != nil || f.ChiSq != 0 || f.PChiSq != 1 || f.F != 0 || f.PF != 1 {
		t.Errorf("all tied: %+v, %v; want chi2 0, p 1, F 0, p 1", f, err)
	}
	// Perfect agreement: chi2 = N(K−1), F infinite.
	f, err = FriedmanTest([][]float64{{1, 2, 3}, {1, 2, 3}, {1, 2, 3}}, false)
	if err != nil || !nearRel(f.ChiSq, 6, 1e-12) || !math.IsInf(f.F, 1) || f.PF != 0 {
		t.Errorf("perfect agreement: %+v, %v; want chi2 6, F +Inf, p 0", f, err)
	}
	for _, bad := range [][][]float64{
		{{1, 2, 3}},
		{{1}, {2}},
		{{1, 2, 3}, {1, 2}},
		{{1, 2, 3}, {1, math.NaN(), 3}},
	} {
		if _, err := FriedmanTest(bad, true); err == nil {
			t.Errorf("FriedmanTest(%v): no error", bad)
		}
	}
}

// Demšar's worked example (§3.2.4, Table 6): AUC of C4.5 with and without
// the tuned m and cf parameters on 14 data sets. The AUCs of his Table 6
// give the mean ranks 3.143, 2.000, 2.929, 1.929 (SciPy agrees), while the
// paper prints 3.143, 2.000, 2.893, 1.964, from its column of ranks, which
// differs from the AUCs by half a rank in one row; its χ²_F = 9.28 and
// F_F = 3.69 (no tie correction) follow from the printed ranks, and are
// checked here from them.
func TestFriedmanDemsar(t *testing.T) {
	auc := [][]float64{{0.763, 0.768, 0.771, 0.798}, {0.599, 0.591, 0.590, 0.569}, {0.954, 0.971, 0.968, 0.967},
		{0.628, 0.661, 0.654, 0.657}, {0.882, 0.888, 0.886, 0.898}, {0.936, 0.931, 0.916, 0.931},
		{0.661, 0.668, 0.609, 0.685}, {0.583, 0.583, 0.563, 0.625}, {0.775, 0.838, 0.866, 0.875},
		{1.000, 1.000, 1.000, 1.000}, {0.940, 0.962, 0.965, 0.962}, {0.619, 0.666, 0.614, 0.669},
		{0.972, 0.981, 0.975, 0.975}, {0.957, 0.978, 0.946, 0.970}}
	f, err := FriedmanTest(auc, true)
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{3.142857142857143, 2.0, 2.9285714285714284, 1.9285714285714286}
	for j := range want {
		if !nearRel(f.MeanRanks[j], want[j], 1e-12) {
			t.Fatalf("mean ranks %v; want %v", f.MeanRanks, want)
		}
	}
	if !nearRel(f.ChiSq, 10.952380952380956, 1e-10) || !nearRel(f.PChiSq, 0.011986176325417788, 1e-9) ||
		!nearRel(f.F, 4.585889570552149, 1e-10) || !nearRel(f.PF, 0.007628838730725733, 1e-8) {
		t.Errorf("Friedman %+v; want SciPy's chi2 10.952 (p 0.01199), F 4.586 (p 0.00763)", f)
	}
	paper := []float64{3.143, 2.000, 2.893, 1.964}
	chi := friedmanChiSq(paper, 14)
	if math.Abs(chi-9.28) > 0.005 {
		t.Errorf("chi2_F of the paper's ranks %.4f; want 9.28", chi)
	}
	if ff := imanDavenport(chi, 14, 4); math.Abs(ff-3.69) > 0.005 {
		t.Errorf("F_F of the paper's ranks %.4f; want 3.69", ff)
	}
	// §3.2.4: CD = 1.25 at α = 0.05 and 1.12 at α = 0.10 (q 2.569, 2.291).
	if cd := NemenyiCD(4, 14, 0.05); math.Abs(cd-1.25) > 0.005 {
		t.Errorf("CD(4, 14, 0.05) = %.4f; want 1.25", cd)
	}
	if cd := NemenyiCD(4, 14, 0.10); math.Abs(cd-1.12) > 0.005 {
		t.Errorf("CD(4, 14, 0.10) = %.4f; want 1.12", cd)
	}
}

func TestStudentizedRangeQuantileReference(t *testing.T) {
	inf := math.Inf(1)
	for _, tc := range []struct {
		p     float64
		k     int
		df, q float64
	}{
		{0.95, 2, inf, 2.771807648699355},
		{0.95, 3, inf, 3.314493155398122},
		{0.95, 4, inf, 3.6331595749026278},
		{0.95, 5, inf, 3.857655510378623},
		{0.95, 6, inf, 4.030092053180576},
		{0.95, 7, inf, 4.169554155006547},
		{0.95, 8, inf, 4.286309409349043},
		{0.95, 9, inf, 4.38650911549537},
		{0.95, 10, inf, 4.474124221725907},
		{0.95, 11, inf, 4.551863584065974},
		{0.95, 12, inf, 4.621655471868518},
		{0.95, 13, inf, 4.684919847313499},
		{0.95, 14, inf, 4.7427317076846975},
		{0.95, 15, inf, 4.795923860431186},
		{0.95, 16, inf, 4.845154183957343},
		{0.95, 17, inf, 4.890951125576789},
		{0.95, 18, inf, 4.933745358126922},
		{0.95, 19, inf, 4.973892348748306},
		{0.95, 20, inf, 5.0116887941184425},
		{0.9, 2, inf, 2.3261743073533476},
		{0.9, 3, inf, 2.9023802134282515},
		{0.9, 4, inf, 3.240446220927359},
		{0.9, 5, inf, 3.478280550703068},
		{0.9, 6, inf, 3.660720941720752},
		{0.9, 7, inf, 3.8080982570260042},
		{0.9, 8, inf, 3.9313491004685965},
		{0.9, 9, inf, 4.037023130237707},
		{0.9, 10, inf, 4.129346398236873},
		{0.9, 11, inf, 4.2112002465427985},
		{0.9, 12, inf, 4.28463460369403},
		{0.9, 13, inf, 4.351158198633436},
		{0.9, 14, inf, 4.411912622167687},
		{0.9, 15, inf, 4.46778181593394},
		{0.9, 16, inf, 4.519463704841072},
		{0.9, 17, inf, 4.567518636278125},
		{0.9, 18, inf, 4.612403071816736},
		{0.9, 19, inf, 4.654493598657081},
		{0.9, 20, inf, 4.694104409490512},
		{0.99, 4, inf, 4.402800861448699},
		{0.5, 3, inf, 1.5877877504463476},
		{0.999, 10, inf, 5.973306526399561},
		{0.95, 3, 10.0, 3.876776750013158},
		{0.95, 5, 20.0, 4.231856748997479},
		{0.99, 4, 5.0, 7.804155687307393},
		{0.9, 10, 30.0, 4.380606527931503},
		{0.95, 2, 1.0, 17.969287064187434},
		{0.5, 6, 3.0, 2.788947238871611},
		{0.95, 20, 120.0, 5.125942774946671},
		{0.95, 4, 1000.0, 3.63927523487881},
		{0.95, 8, 2.5, 10.309865442388793},
	} {
		got := StudentizedRangeQuantile(tc.p, tc.k, tc.df)
		if !nearRel(got, tc.q, 1e-7) {
			t.Errorf("StudentizedRangeQuantile(%v, %d, %v) = %.12g; want %.12g (rel %.2g)", tc.p, tc.k, tc.df, got, tc.q, got/tc.q-1)
		}
		if c := StudentizedRangeCDF(tc.q, tc.k, tc.df); !nearRel(c, tc.p, 1e-8) {
			t.Errorf("StudentizedRangeCDF(%v, %d, %v) = %.12g; want %v", tc.q, tc.k, tc.df, c, tc.p)
		}
	}
	for _, bad := range []struct {
		p  float64
		k  int
		df float64
	}{{0.95, 1, inf}, {1.5, 3, inf}, {-0.1, 3, 10}, {0.95, 3, 0}, {math.NaN(), 3, 10}} {
		if q := StudentizedRangeQuantile(bad.p, bad.k, bad.df); !math.IsNaN(q) {
			t.Errorf("StudentizedRangeQuantile(%v, %d, %v) = %v; want NaN", bad.p, bad.k, bad.df, q)
		}
	}
	if q := StudentizedRangeQuantile(0, 3, inf); q != 0 {
		t.Errorf("p = 0: %v", q)
	}
	if q := StudentizedRangeQuantile(1, 3, 5); !math.IsInf(q, 1) {
		t.Errorf("p = 1: %v", q)
	}
}

// Demšar's Table 5a lists q_0.05/√2 and q_0.10/√2 for 2 to 10 classifiers,
// to three decimals (two of its entries are off by one in the last digit
// from the rounded quantile: 2.343 for 2.3437, 2.949 for 2.9483).
func TestNemenyiDemsarTable5a(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		q     []float64
	}{
		{0.05, []float64{1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164}},
		{0.10, []float64{1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920}},
	} {
		for i, want := range tc.q {
			k := i + 2
			// CD with n = k(k+1)/6 data sets is q_α/√2 itself.
			got := NemenyiCD(k, 1, tc.alpha) / math.Sqrt(float64(k*(k+1))/6)
			if math.Abs(got-want) > 1e-3 {
				t.Errorf("q_%v/√2 for k = %d: %.4f; want %.3f", tc.alpha, k, got, want)
			}
		}
	}
	for _, bad := range []struct {
		k, n  int
		alpha float64
	}{{1, 10, 0.05}, {3, 0, 0.05}, {3, 10, 0}, {3, 10, 1}} {
		if cd := NemenyiCD(bad.k, bad.n, bad.alpha); !math.IsNaN(cd) {
			t.Errorf("NemenyiCD(%d, %d, %v) = %v; want NaN", bad.k, bad.n, bad.alpha, cd)
		}
	}
}

func TestFindRoot(t *testing.T) {
	for _, tc := range []struct {
		f       func(float64) float64
		a, b, x float64
	}{
		{func(x float64) float64 { return x*x - 2 }, 0, 2, math.Sqrt2},
		{math.Cos, 0, 3, math.Pi / 2},
		{func(x float64) float64 { return math.Exp(x) - 10 }, -5, 5, math.Log(10)},
		{func(x float64) float64 { return x * x * x }, -1, 2, 0},
	} {
		x, err := findRoot(tc.f, tc.a, tc.b, 1e-14)
		if err != nil || math.Abs(x-tc.x) > 1e-12 {
			t.Errorf("findRoot on [%v, %v] = %v, %v; want %v", tc.a, tc.b, x, err, tc.x)
		}
	}
	if _, err := findRoot(func(x float64) float64 { return x*x + 1 }, -1, 1, 1e-12); err == nil {
		t.Error("no sign change: no error")
	}
}
