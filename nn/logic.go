package nn

import "github.com/amt-dev/amt/nn/internal/shapes"

// Comparisons (Equal, Less, Greater, LessOrEqual, GreaterOrEqual), logical
// operators (And, Or, Xor, Not) and Where. ONNX gives them bool tensors;
// folded at load time they are integer constants holding 0 and 1, at run
// time float32 tensors holding 0 and 1 (every run-time value of the engine
// is float32), which is what Where, Cast and the arithmetic operators read
// back. Exported models use them mostly on shapes (ViT's class-token
// Expand, Swin's attention mask), which fold at load time.

// compare returns the build function of a comparison operator.
func compare(f func(x, y float64) bool) buildFunc {
	return boolBinop(func(x, y float32) float32 { return b2f(f(float64(x), float64(y))) },
		func(x, y int64) int64 { return b2i(f(float64(x), float64(y))) })
}

// logical returns the build function of a logical binary operator, on
// values read as false (0) or true (anything else).
func logical(f func(x, y bool) bool) buildFunc {
	return boolBinop(func(x, y float32) float32 { return b2f(f(x != 0, y != 0)) },
		func(x, y int64) int64 { return b2i(f(x != 0, y != 0)) })
}

// boolBinop is binop for an operator with a bool result: constants fold to
// an integer constant (also from float operands), run-time values give
// 0/1 floats.
func boolBinop(f func(x, y float32) float32, fi func(x, y int64) int64) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		x, y := need(ins, 0, "A"), need(ins, 1, "B")
		shape, err := shapes.Broadcast(x.shape, y.shape)
		if err != nil {
			fail("%v", err)
		}
		if x.c != nil && y.c != nil {
			out := make([]int64, b.checkConst(shape, true))
			if x.c.isInt && y.c.isInt {
				bcast(out, shape, x.c.i, x.shape, y.c.i, y.shape, fi)
			} else {
				of := make([]float32, len(out))
				bcast(of, shape, x.c.floats(), x.shape, y.c.floats(), y.shape, f)
				for k, v := range of {
					out[k] = int64(v)
				}
			}
			return constVal(&tens{shape: shape, i: out, isInt: true})
		}
		xs, ys := x.shape, y.shape
		return b.emit(shape, []*value{x, y}, func(out []float32, ins [][]float32) {
			bcast(out, shape, ins[0], xs, ins[1], ys, f)
		})
	})
}

func b2f(v bool) float32 {
	if v {
		return 1
	}
	return 0
}

func b2i(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// The functions of the comparison and logical operators.

func equal(x, y float64) bool          { return x == y }
func less(x, y float64) bool           { return x < y }
func greater(x, y float64) bool        { return x > y }
func lessOrEqual(x, y float64) bool    { return x <= y }
func greaterOrEqual(x, y float64) bool { return x >= y }
func and(x, y bool) bool               { return x && y }
func or(x, y bool) bool                { return x || y }
func xor(x, y bool) bool               { return x != y }

func notOp(b *builder, _ *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	if x.c != nil {
		v := x.c.ints()
		out := make([]int64, len(v))
		for k, e := range v {
			out[k] = b2i(e == 0)
		}
		return constVal(&tens{shape: x.shape, i: out, isInt: true})
	}
	return b.unaryOp(x, func(v float32) float32 { return b2f(v == 0) }, false)
}

// whereOp is Where(condition, X, Y) with the three inputs broadcast
// together.
func whereOp(b *builder, _ *attrs, ins []*value) *value {
	c, x, y := need(ins, 0, "condition"), need(ins, 1, "X"), need(ins, 2, "Y")
	shape, err := shapes.Broadcast(c.shape, x.shape)
	if err == nil {
		shape, err = shapes.Broadcast(shape, y.shape)
	}
	if err != nil {
		fail("%v", err)
	}
	cs, xs, ys := c.shape, x.shape, y.shape
	if c.c != nil && x.c != nil && y.c != nil && (x.c.isInt || y.c.isInt) {
		if !x.c.isInt || !y.c.isInt {
			fail("X and Y differ in type (integer and float)")
		}
		out := make([]int64, b.checkConst(shape, true))
		bcast3(out, shape, c.c.ints(), cs, x.c.i, xs, y.c.i, ys)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	if (x.c != nil && x.c.isInt) || (y.c != nil && y.c.isInt) {
		fail("integer X or Y with a run-time condition or operand is not supported")
	}
	return b.emit(shape, []*value{c, x, y}, func(out []float32, ins [][]float32) {
		bcast3(out, shape, ins[0], cs, ins[1], xs, ins[2], ys)
	})
}

// bcast3 computes out = c ? x : y element-wise with numpy broadcasting of
// the three operands (shapes cs, xs, ys) to os.
func bcast3[C, T number](out []T, os []int, c []C, cs []int, x []T, xs []int, y []T, ys []int) {
	if len(out) == 0 {
		return
	}
	nd := len(os)
	if nd == 0 {
		out[0] = y[0]
		if c[0] != 0 {
			out[0] = x[0]
		}
		return
	}
	st, idx, off := bcastRowStart(os, 0, cs, xs, ys)
	inner := os[nd-1]
	ic, ix, iy := st[0][nd-1], st[1][nd-1], st[2][nd-1]
	for o := 0; o < len(out); o += inner {
		pc, px, py := off[0], off[1], off[2]
		for j := range out[o : o+inner] {
			if c[pc] != 0 {
				out[o+j] = x[px]
			} else {
				out[o+j] = y[py]
			}
			pc += ic
			px += ix
			py += iy
		}
		nextRow(idx, os, off, st...)
	}
}
