// Package shapes holds the shape arithmetic that the CPU engine (package
// nn) and the GPU device (package nn/cuda) share: numpy broadcasting and
// row-major strides.
package shapes

import "fmt"

// Strides returns the row-major strides of shape s.
func Strides(s []int) []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// Broadcast returns the numpy broadcast of shapes a and b.
func Broadcast(a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out := make([]int, n)
	for i := range out {
		da, db := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %v and %v cannot be broadcast (dimension %d: %d vs %d)", a, b, i, da, db)
		}
	}
	return out, nil
}
