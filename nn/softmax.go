package nn

import (
	"math"

	"github.com/amt-dev/amt/nn/kernels"
)

// softmaxAxis returns Softmax's axis attribute, whose default changed in
// opset 13 (from 1 to -1), not normalised.
func softmaxAxis(b *builder, a *attrs) int64 {
	def := int64(1)
	if b.p.opset >= 13 {
		def = -1
	}
	return a.int("axis", def)
}

func softmaxOp(b *builder, a *attrs, ins []*value) *value    { return b.softmax(a, ins, false) }
func logSoftmaxOp(b *builder, a *attrs, ins []*value) *value { return b.softmax(a, ins, true) }

// softmax implements Softmax and, with log, LogSoftmax: over one axis from
// opset 13, over all axes from the axis on before (the input coerced to
// 2-D).
func (b *builder) softmax(a *attrs, ins []*value, log bool) *value {
	x := need(ins, 0, "input")
	r := len(x.shape)
	ax, err := normAxis(softmaxAxis(b, a), r)
	if err != nil {
		fail("%v", err)
	}
	var outer, n, inner int
	if b.p.opset >= 13 {
		outer, n, inner = numel(x.shape[:ax]), x.shape[ax], numel(x.shape[ax+1:])
	} else { // coerced to 2-D [outer, n]
		outer, n, inner = numel(x.shape[:ax]), numel(x.shape[ax:]), 1
	}
	v := b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		if inner == 1 {
			parallelRows(outer, n, func(o0, o1 int) {
				for o := o0; o < o1; o++ {
					softmaxRow(out[o*n:(o+1)*n], in[o*n:(o+1)*n], log)
				}
			})
			return
		}
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base := o*n*inner + i
				m := float32(math.Inf(-1))
				for k := 0; k < n; k++ {
					m = max(m, in[base+k*inner])
				}
				var s float64
				for k := 0; k < n; k++ {
					e := kernels.Expf(in[base+k*inner] - m)
					if !log {
						out[base+k*inner] = e
					}
					s += float64(e)
				}
				if log {
					ls := m + float32(math.Log(s))
					for k := 0; k < n; k++ {
						out[base+k*inner] = in[base+k*inner] - ls
					}
					continue
				}
				inv := float32(1 / s)
				for k := 0; k < n; k++ {
					out[base+k*inner] *= inv
				}
			}
		}
	})
	if !log {
		b.onDevice(v, devSoftmax{outer, n, inner})
	}
	return v
}

// softmaxRow writes the softmax (or, with log, the log-softmax) of in to
// out.
func softmaxRow(out, in []float32, log bool) {
	m := kernels.Max(in)
	if math.IsInf(float64(m), 0) || m != m {
		softmaxRowSlow(out, in, m, log)
		return
	}
	s := kernels.ExpShifted(out, in, m)
	if log {
		ls := m + float32(math.Log(s))
		for k, v := range in {
			out[k] = v - ls
		}
		return
	}
	kernels.Scale(out, float32(1/s))
}

// softmaxRowSlow is softmaxRow for a row whose maximum m is infinite or
// NaN (all −Inf, or +Inf or NaN in it): the exponentials computed in the
// general way, giving what ONNX Runtime gives (NaN where it does).
func softmaxRowSlow(out, in []float32, m float32, log bool) {
	var s float64
	for k, v := range in {
		e := kernels.Expf(v - m)
		out[k] = e
		s += float64(e)
	}
	for k, v := range in {
		if log {
			out[k] = v - m - float32(math.Log(s))
		} else {
			out[k] = float32(float64(out[k]) / s)
		}
	}
}

// parallelRows runs f over rows [0, n) of cost values each, split over the
// cores when there is enough work to pay for the goroutines.
func parallelRows(n, cost int, f func(i0, i1 int)) {
	if n*cost < 1<<15 {
		f(0, n)
		return
	}
	forEachChunk(n, f)
}

// softmaxPerImage: Softmax normalises within an image unless its axis is
// the batch axis.
func softmaxPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && axisNot0(softmaxAxis(b, a), len(ins[0].shape))
}
