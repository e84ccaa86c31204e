# Reference values of ranks_test.go and binomial_test.go, computed offline
# with SciPy (the versions printed first; Debian 12's python3-scipy, SciPy
# 1.10.1). Run: /usr/bin/python3 plots/analysis/testdata/ranks_reference.py
# and paste its output into the tests. Nothing at run or test time needs
# Python.
import math
import numpy as np, scipy
from scipy import stats

print("// numpy", np.__version__, "scipy", scipy.__version__)

def g(x):
    return repr(float(x))

def vec(v):
    return "[]float64{" + ", ".join(g(x) for x in v) + "}"

def mat(m):
    return "[][]float64{" + ", ".join(vec(r) for r in m) + "}"

# Studentized range quantiles.
print("// StudentizedRangeQuantile: p, k, df, q (scipy.stats.studentized_range.ppf)")
inf = float("inf")
cases = [(p, k, inf) for p in (0.95, 0.90) for k in range(2, 21)]
cases += [(0.99, 4, inf), (0.5, 3, inf), (0.999, 10, inf),
          (0.95, 3, 10.0), (0.95, 5, 20.0), (0.99, 4, 5.0), (0.90, 10, 30.0),
          (0.95, 2, 1.0), (0.5, 6, 3.0), (0.95, 20, 120.0), (0.95, 4, 1000.0),
          (0.95, 8, 2.5)]
for p, k, df in cases:
    q = stats.studentized_range.ppf(p, k, df)
    print("{%s, %d, %s, %s}," % (g(p), k, "inf" if df == inf else g(df), g(q)))

# Friedman test: tie-corrected chi-square and Iman-Davenport F.
print("// FriedmanTest: scores (rows = data sets), higherBetter, mean ranks, chisq, p, F, pF")
rng = np.random.default_rng(11)
tables = [
    ([[0.1, 0.5, 0.3], [0.2, 0.6, 0.25], [0.15, 0.4, 0.5], [0.3, 0.7, 0.1], [0.22, 0.55, 0.35]], True),
    ([[1, 2, 2, 4], [3, 1, 2, 2], [1, 1, 1, 2], [4, 3, 2, 1], [2, 2, 3, 1], [1, 3, 2, 4]], False),
    (np.round(rng.normal([0.3, 0.35, 0.4, 0.32, 0.5], 0.05, size=(12, 5)), 2).tolist(), True),
    ([[5.0, 3.0], [4.0, 4.5], [6.0, 1.0]], False),
]
for t, hb in tables:
    a = np.array(t, dtype=float)
    n, k = a.shape
    r = np.array([stats.rankdata(-row if hb else row) for row in a])
    cols = [a[:, j] for j in range(k)]
    if k >= 3:
        chi, p = stats.friedmanchisquare(*cols)
    else:  # SciPy needs three columns; the same formula by hand.
        ties = 0
        for row in r:
            _, cnt = np.unique(row, return_counts=True)
            ties += sum(c * (c * c - 1) for c in cnt)
        c = 1 - ties / (k * (k * k - 1) * n)
        chi = (12.0 / (k * n * (k + 1)) * np.sum(r.sum(0) ** 2) - 3 * n * (k + 1)) / c
        p = stats.chi2.sf(chi, k - 1)
    F = (n - 1) * chi / (n * (k - 1) - chi)
    pF = stats.f.sf(F, k - 1, (k - 1) * (n - 1))
    print("{%s, %s, %s, %s, %s, %s, %s}," % (mat(a), "true" if hb else "false", vec(r.mean(0)), g(chi), g(p), g(F), g(pF)))

# Demšar's Table 6 (AUC of C4.5 variants on 14 data sets).
demsar = [[0.763, 0.768, 0.771, 0.798], [0.599, 0.591, 0.590, 0.569], [0.954, 0.971, 0.968, 0.967],
          [0.628, 0.661, 0.654, 0.657], [0.882, 0.888, 0.886, 0.898], [0.936, 0.931, 0.916, 0.931],
          [0.661, 0.668, 0.609, 0.685], [0.583, 0.583, 0.563, 0.625], [0.775, 0.838, 0.866, 0.875],
          [1.000, 1.000, 1.000, 1.000], [0.940, 0.962, 0.965, 0.962], [0.619, 0.666, 0.614, 0.669],
          [0.972, 0.981, 0.975, 0.975], [0.957, 0.978, 0.946, 0.970]]
a = np.array(demsar)
r = np.array([stats.rankdata(-row) for row in a])
chi, p = stats.friedmanchisquare(*a.T)
n, k = a.shape
F = (n - 1) * chi / (n * (k - 1) - chi)
print("// Demšar Table 6: mean ranks", vec(r.mean(0)), "chisq", g(chi), "p", g(p), "F", g(F), "pF", g(stats.f.sf(F, k - 1, (k - 1) * (n - 1))))

# Binomial proportion intervals.
print("// Wilson and ClopperPearson: x, n, level, wilson lo, hi, exact lo, hi (binomtest(x, n).proportion_ci)")
for x, n, lvl in [(0, 10, 0.95), (1, 10, 0.95), (5, 10, 0.95), (10, 10, 0.95), (3, 7, 0.9),
                  (37, 120, 0.95), (981, 1000, 0.99), (1, 1, 0.95), (0, 1, 0.95), (450, 1000, 0.95),
                  (2, 500, 0.95)]:
    b = stats.binomtest(x, n)
    w = b.proportion_ci(confidence_level=lvl, method='wilson')
    e = b.proportion_ci(confidence_level=lvl, method='exact')
    print("{%d, %d, %s, %s, %s, %s, %s}," % (x, n, g(lvl), g(w.low), g(w.high), g(e.low), g(e.high)))
