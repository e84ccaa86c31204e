# Reference values of stats_test.go, computed offline with SciPy (the
# versions printed first). Run: /usr/bin/python3 plots/analysis/testdata/stats_reference.py
# and paste its output into stats_test.go. Nothing at run or test time needs
# Python.
import numpy as np, scipy
from scipy import stats

print("// numpy", np.__version__, "scipy", scipy.__version__)

def g(x):
    return repr(float(x))

def vec(v):
    return "[]float64{" + ", ".join(g(x) for x in v) + "}"

# Mean with a Student-t interval.
cases = [
    ([0.3206, 0.3301, 0.3120, 0.3289, 0.3177, 0.3250, 0.3199, 0.3342, 0.3085, 0.3233], 0.95),
    ([0.45, 0.47], 0.95),
    ([0.61, 0.58, 0.66, 0.70, 0.59, 0.63, 0.64, 0.60, 0.67, 0.62, 0.65, 0.61, 0.69, 0.57, 0.66,
      0.64, 0.63, 0.62, 0.68, 0.60, 0.61, 0.66, 0.63, 0.64, 0.59, 0.65, 0.62, 0.67, 0.60, 0.63], 0.95),
    ([1.0, 2.0, 4.0, 8.0, 16.0], 0.99),
]
print("// MeanCI: xs, level, mean, sd, half (t.ppf(1-(1-level)/2, n-1) * sd / sqrt(n))")
for xs, lvl in cases:
    a = np.array(xs)
    n = len(a)
    sd = a.std(ddof=1)
    half = stats.t.ppf(1 - (1 - lvl) / 2, n - 1) * sd / np.sqrt(n)
    print("{%s, %s, %s, %s, %s}," % (vec(xs), g(lvl), g(a.mean()), g(sd), g(half)))

# Paired t-test (scipy.stats.ttest_rel) with the interval of the mean difference.
pairs = [
    ([0.4554, 0.4411, 0.4630, 0.4485, 0.4298, 0.4572, 0.4503, 0.4366, 0.4621, 0.4424],
     [0.3206, 0.3301, 0.3120, 0.3289, 0.3177, 0.3250, 0.3199, 0.3342, 0.3085, 0.3233]),
    ([0.4554, 0.4411, 0.4630, 0.4485, 0.4298, 0.4572, 0.4503, 0.4366, 0.4621, 0.4424],
     [0.4501, 0.4452, 0.4587, 0.4512, 0.4390, 0.4498, 0.4530, 0.4402, 0.4556, 0.4469]),
    ([0.52, 0.49, 0.55], [0.50, 0.50, 0.51]),
]
print("// PairedTest: a, b, mean diff, half, t, p")
for a, b in pairs:
    r = stats.ttest_rel(a, b)
    ci = r.confidence_interval(0.95)
    d = np.array(a) - np.array(b)
    print("{%s, %s, %s, %s, %s, %s}," % (vec(a), vec(b), g(d.mean()), g((ci.high - ci.low) / 2), g(r.statistic), g(r.pvalue)))

# Wilcoxon signed-rank, exact, no ties or zeros.
print("// WilcoxonSignedRank exact (scipy.stats.wilcoxon, method='exact')")
ws = [
    [0.1349, 0.111, 0.151, 0.1196, 0.1121, 0.1322, 0.1304, 0.1024, 0.1536, 0.1191],
    [0.0053, -0.0041, 0.0043, -0.0027, -0.0092, 0.0074, -0.0027 + 0.0001, -0.0036, 0.0065, -0.0045],
    [1.5, -2.25, 3.125, 4.0625, -5.5, 6.75, 7.875, -8.125, 9.0625, 10.5, -11.25, 12.125],
    [-0.3, 0.1],
]
for d in ws:
    print("{%s, %s}," % (vec(d), g(stats.wilcoxon(d, method='exact').pvalue)))

# Ties and zeros: zeros dropped, then the exact sign-flip distribution of
# the signed-rank statistic with mid-ranks (scipy.stats.permutation_test,
# one sample, permutation_type='samples' flips signs; exact enumeration).
print("// WilcoxonSignedRank with ties and zeros (permutation_test over all sign flips)")
wt = [
    [0.01, -0.01, 0.02, 0.02, 0.0, 0.03, -0.02, 0.01, 0.04, 0.0],
    [1, 1, 1, 2, 2, -3, 3, 4, 4, 4, -5, 6],
    [2, 2, 2, 2, 2, 2, 2, 2, 2, 2],
]
for d in wt:
    dd = np.array([x for x in d if x != 0], dtype=float)
    r = stats.rankdata(np.abs(dd))
    def stat(x, axis=-1):
        return np.sum(np.where(x > 0, r, 0), axis=axis)
    res = stats.permutation_test((dd,), stat, permutation_type='samples', n_resamples=np.inf, alternative='two-sided', vectorized=True)
    print("{%s, %s}," % (vec(d), g(res.pvalue)))

# Normal approximation for more than 50 non-zero differences.
print("// WilcoxonSignedRank approx (scipy.stats.wilcoxon, method='approx', correction=False)")
rng = np.random.default_rng(7)
d = np.round(rng.normal(0.3, 1.0, 60), 1)
print("{%s, %s}," % (vec(d), g(stats.wilcoxon(d, method='approx', correction=False).pvalue)))
