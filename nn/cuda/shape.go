//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// numel returns the number of elements of shape, or an error when a
// dimension is negative or the count exceeds what the kernels index.
func numel(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("shape %v has a negative dimension", shape)
		}
		if d > 0 && n > maxElems/d {
			return 0, fmt.Errorf("shape %v has more than %d elements", shape, maxElems)
		}
		n *= d
	}
	return n, nil
}

// bstrides returns the strides with which a tensor of shape s is read when
// broadcast to shape out (0 along broadcast axes).
func bstrides(s, out []int) []int {
	st := make([]int, len(out))
	src := shapes.Strides(s)
	off := len(out) - len(s)
	for i := range s {
		if s[i] != 1 {
			st[off+i] = src[i]
		}
	}
	return st
}

// collapse drops size-1 axes and merges adjacent axes along which every
// stride set is contiguous (the outer stride is the inner stride times
// the inner size), so that the kernels decompose as few axes as possible.
// A shape with no axis left becomes [1].
func collapse(shape []int, strides ...[]int) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(strides))
	for i, n := range shape {
		if n == 1 {
			continue
		}
		if k := len(cs) - 1; k >= 0 {
			merge := true
			for j, s := range strides {
				if cst[j][k] != s[i]*n {
					merge = false
					break
				}
			}
			if merge {
				cs[k] *= n
				for j, s := range strides {
					cst[j][k] = s[i]
				}
				continue
			}
		}
		cs = append(cs, n)
		for j, s := range strides {
			cst[j] = append(cst[j], s[i])
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
		for j := range cst {
			cst[j] = []int{0}
		}
	}
	return cs, cst
}
