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
	// Taylor polynomials on |r| ≲ π/4 by Horner's rule in double-double;
	// the first omitted terms, r^31/31! and r^30/30!, are below 1e-34.
	sinCoef := [...]dd{ // (−1)^(k+1)/(2k+3)!
		{-0x1.5555555555555p-3, -0x1.5555555555555p-57},   // −1/3!
		{0x1.1111111111111p-7, 0x1.1111111111111p-63},     // +1/5!
		{-0x1.a01a01a01a01ap-13, -0x1.a01a01a01a01ap-73},  // −1/7!
		{0x1.71de3a556c734p-19, -0x1.c154f8ddc6c00p-73},   // +1/9!
		{-0x1.ae64567f544e4p-26, 0x1.c062e06d1f209p-80},   // −1/11!
		{0x1.6124613a86d09p-33, 0x1.f28e0cc748ebep-87},    // +1/13!
		{-0x1.ae7f3e733b81fp-41, -0x1.1d8656b0ee8cbp-97},  // −1/15!
		{0x1.952c77030ad4ap-49, 0x1.ac981465ddc6cp-103},   // +1/17!
		{-0x1.2f49b46814157p-57, -0x1.2650f61dbdcb4p-112}, // −1/19!
		{0x1.71b8ef6dcf572p-66, -0x1.d043ae40c4647p-120},  // +1/21!
		{-0x1.761b41316381ap-75, 0x1.3423c7d91404fp-130},  // −1/23!
		{0x1.3f3ccdd165fa9p-84, -0x1.58ddadf344487p-139},  // +1/25!
		{-0x1.d1ab1c2dccea3p-94, -0x1.054d0c78aea14p-149}, // −1/27!
		{0x1.259f98b4358adp-103, 0x1.eaf8c39dd9bc5p-157},  // +1/29!
	}
	cosCoef := [...]dd{ // (−1)^(k+1)/(2k+2)!
		{-0x1.0000000000000p-1, 0x0.0p+0},                 // −1/2!
		{0x1.5555555555555p-5, 0x1.5555555555555p-59},     // +1/4!
		{-0x1.6c16c16c16c17p-10, 0x1.f49f49f49f49fp-65},   // −1/6!
		{0x1.a01a01a01a01ap-16, 0x1.a01a01a01a01ap-76},    // +1/8!
		{-0x1.27e4fb7789f5cp-22, -0x1.cbbc05b4fa99ap-76},  // −1/10!
		{0x1.1eed8eff8d898p-29, -0x1.2aec959e14c06p-83},   // +1/12!
		{-0x1.93974a8c07c9dp-37, -0x1.05d6f8a2efd1fp-92},  // −1/14!
		{0x1.ae7f3e733b81fp-45, 0x1.1d8656b0ee8cbp-101},   // +1/16!
		{-0x1.6827863b97d97p-53, -0x1.eec01221a8b0bp-107}, // −1/18!
		{0x1.e542ba4020225p-62, 0x1.ea72b4afe3c2fp-120},   // +1/20!
		{-0x1.0ce396db7f853p-70, 0x1.aebcdbd20331cp-124},  // −1/22!
		{0x1.f2cf01972f578p-80, -0x1.9ada5fcc1ab14p-135},  // +1/24!
		{-0x1.88e85fc6a4e5ap-89, 0x1.71c37ebd16540p-143},  // −1/26!
		{0x1.0a18a2635085dp-98, 0x1.b9e2e28e1aa54p-153},   // +1/28!
	}
	r2 := r.mul(r)
	ps, pc := sinCoef[len(sinCoef)-1], cosCoef[len(cosCoef)-1]
	for k := len(sinCoef) - 2; k >= 0; k-- {
		ps = ps.mul(r2).add(sinCoef[k])
		pc = pc.mul(r2).add(cosCoef[k])
	}
	s := r.add(r.mul(r2).mul(ps)) // r − r³/3! + …
	c := dd{1, 0}.add(r2.mul(pc)) // 1 − r²/2! + …
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
