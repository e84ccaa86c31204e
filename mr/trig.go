package mr

import "math"

// The affine relations must build the same float64 matrix as the original
// Python code, whose math.sin and math.cos (glibc) return the correctly
// rounded result. Go's math.Sin and math.Cos can be 1 ulp off (for example
// cos(rad(90)) = 6.123233995736757e-17 instead of 6.123233995736766e-17),
// which moves transformed boxes by ~1e-13 px and could flip a rounding in
// the fixed-point warp. sincos below evaluates in double-double arithmetic
// (~104 bits) and rounds once, which is correctly rounded except in
// astronomically rare hard cases.

// dd is an unevaluated sum hi + lo with |lo| ≤ ulp(hi)/2.
type dd struct{ hi, lo float64 }

func twoSum(a, b float64) dd {
	s := a + b
	bb := s - a
	return dd{s, (a - (s - bb)) + (b - bb)}
}

func fastTwoSum(a, b float64) dd {
	s := a + b
	return dd{s, b - (s - a)}
}

func twoProd(a, b float64) dd {
	p := a * b
	return dd{p, math.FMA(a, b, -p)}
}

func (a dd) add(b dd) dd {
	s := twoSum(a.hi, b.hi)
	t := twoSum(a.lo, b.lo)
	s.lo += t.hi
	s = fastTwoSum(s.hi, s.lo)
	s.lo += t.lo
	return fastTwoSum(s.hi, s.lo)
}

func (a dd) mul(b dd) dd {
	p := twoProd(a.hi, b.hi)
	p.lo += a.hi*b.lo + a.lo*b.hi
	return fastTwoSum(p.hi, p.lo)
}

func (a dd) divF(b float64) dd {
	q := a.hi / b
	p := twoProd(q, b)
	r := (a.hi - p.hi - p.lo + a.lo) / b
	return fastTwoSum(q, r)
}

func (a dd) neg() dd { return dd{-a.hi, -a.lo} }

// π/2 as a sum of three float64 values (about 160 bits).
const (
	pio2a = 0x1.921fb54442d18p+0
	pio2b = 0x1.1a62633145c07p-54
	pio2c = -0x1.f1976b7ed8fbcp-110
)

// sincos returns sin(x) and cos(x) correctly rounded to float64 for
// |x| ≤ 1e6 (every angle the relations accept); larger or non-finite
// arguments fall back to math.Sincos.
func sincos(x float64) (sin, cos float64) {
	if x == 0 {
		return x, 1 // keeps the sign of zero, like sin(±0) = ±0
	}
	if !(math.Abs(x) <= 1e6) {
		return math.Sincos(x)
	}
	k := math.RoundToEven(x / pio2a)
	// r = x − k·π/2 in double-double; k·pio2a is exact in two parts.
	r := dd{x, 0}.add(twoProd(k, pio2a).neg())
	r = r.add(twoProd(k, pio2b).neg())
	r = r.add(dd{-k * pio2c, 0})
	// Taylor series on |r| ≲ π/4: terms fall below 1e-34 by n = 31.
	r2 := r.mul(r)
	s, c := r, dd{1, 0}
	ts, tc := r, dd{1, 0}
	for n := 2; n <= 32; n += 2 {
		tc = tc.mul(r2).divF(float64(-(n - 1) * n))
		ts = ts.mul(r2).divF(float64(-n * (n + 1)))
		c = c.add(tc)
		s = s.add(ts)
		if math.Abs(tc.hi) < 1e-34 && math.Abs(ts.hi) < 1e-34*math.Abs(s.hi) {
			break
		}
	}
	sv, cv := s.hi+s.lo, c.hi+c.lo
	switch int(math.Mod(k, 4)+4) % 4 {
	case 0:
		return sv, cv
	case 1:
		return cv, -sv
	case 2:
		return -sv, -cv
	default:
		return -cv, sv
	}
}
