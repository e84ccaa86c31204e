package nn

import (
	"fmt"
	"slices"

	"gorgonia.org/tensor"
)

// tens is a tensor known at load time: an initializer, a Constant or a
// folded value. Exactly one of f and i holds its data.
type tens struct {
	shape []int
	f     []float32
	i     []int64
	isInt bool
}

func emptyTens(dims []int64) *tens {
	s := make([]int, len(dims))
	for k, d := range dims {
		s[k] = int(d)
	}
	return &tens{shape: s, f: []float32{}}
}

// ints returns the values of an integer (or integral float) tensor.
func (t *tens) ints() []int64 {
	if t.isInt {
		return t.i
	}
	out := make([]int64, len(t.f))
	for k, v := range t.f {
		out[k] = int64(v)
	}
	return out
}

// floats returns the values as float32.
func (t *tens) floats() []float32 {
	if !t.isInt {
		return t.f
	}
	out := make([]float32, len(t.i))
	for k, v := range t.i {
		out[k] = float32(v)
	}
	return out
}

func (t *tens) withShape(s []int) *tens {
	return &tens{shape: s, f: t.f, i: t.i, isInt: t.isInt}
}

// fromTensor converts a tensor decoded by onnx-go.
func fromTensor(t tensor.Tensor) (*tens, error) {
	shape := []int(t.Shape().Clone())
	if t.Shape().IsScalar() {
		shape = []int{}
	}
	out := &tens{shape: shape}
	switch d := t.Data().(type) {
	case []float32:
		out.f = slices.Clone(d)
	case float32:
		out.f = []float32{d}
	case []float64:
		out.f = make([]float32, len(d))
		for k, v := range d {
			out.f[k] = float32(v)
		}
	case float64:
		out.f = []float32{float32(d)}
	case []int64:
		out.i, out.isInt = slices.Clone(d), true
	case int64:
		out.i, out.isInt = []int64{d}, true
	case []int32:
		out.i, out.isInt = make([]int64, len(d)), true
		for k, v := range d {
			out.i[k] = int64(v)
		}
	case int32:
		out.i, out.isInt = []int64{int64(d)}, true
	case []bool:
		out.i, out.isInt = make([]int64, len(d)), true
		for k, v := range d {
			if v {
				out.i[k] = 1
			}
		}
	case bool:
		out.i, out.isInt = []int64{0}, true
		if d {
			out.i[0] = 1
		}
	default:
		return nil, fmt.Errorf("unsupported tensor data type %T", d)
	}
	n := len(out.f)
	if out.isInt {
		n = len(out.i)
	}
	if n != numel(shape) {
		return nil, fmt.Errorf("tensor of shape %v holds %d values", shape, n)
	}
	return out, nil
}
