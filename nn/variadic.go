package nn

import (
	"fmt"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// variadic returns the build function of Sum, Min, Max (f, fi) and Mean
// (Sum, then divided by the number of inputs): the inputs broadcast
// together, combined left to right.
func variadic(f func(x, y float32) float32, fi func(x, y int64) int64, mean bool) buildFunc {
	return one(func(b *builder, _ *attrs, ins []*value) *value {
		if len(ins) == 0 {
			fail("no inputs")
		}
		vals := make([]*value, len(ins))
		allConst, anyInt := true, false
		shape := need(ins, 0, "data_0").shape
		for k := range ins {
			vals[k] = need(ins, k, fmt.Sprintf("data_%d", k))
			var err error
			if shape, err = shapes.Broadcast(shape, vals[k].shape); err != nil {
				fail("%v", err)
			}
			allConst = allConst && vals[k].c != nil
			anyInt = anyInt || (vals[k].c != nil && vals[k].c.isInt)
		}
		shapes := make([][]int, len(vals))
		for k, v := range vals {
			shapes[k] = v.shape
		}
		if anyInt {
			if !allConst || mean {
				fail("integer inputs are supported only for Sum, Min and Max of constants")
			}
			out := make([]int64, b.checkConst(shape, true))
			bcast(out, shape, vals[0].c.ints(), shapes[0], []int64{0}, nil, first[int64])
			for k, v := range vals[1:] {
				bcast(out, shape, out, shape, v.c.ints(), shapes[k+1], fi)
			}
			return constVal(&tens{shape: shape, i: out, isInt: true})
		}
		return b.emit(shape, vals, func(out []float32, in [][]float32) {
			bcast(out, shape, in[0], shapes[0], []float32{0}, nil, first[float32])
			for k := 1; k < len(in); k++ {
				bcast(out, shape, out, shape, in[k], shapes[k], f)
			}
			if mean {
				inv := 1 / float32(len(in))
				for i := range out {
					out[i] *= inv
				}
			}
		})
	})
}

// The functions of the variadic operators (min and max propagate NaN).

func first[T number](x, _ T) T { return x }
func minOf[T number](x, y T) T { return min(x, y) }
func maxOf[T number](x, y T) T { return max(x, y) }
