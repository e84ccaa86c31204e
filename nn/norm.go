package nn

import (
	"math"
	"slices"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// Normalisations other than BatchNormalization (conv.go):
// LayerNormalization (opset 17) and the layer normalisation exporters
// write before it as ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt, Div (Mul,
// Add), which is compiled into the same single op; InstanceNormalization;
// LRN.

// normPlan normalises x viewed as [outer, n, inner] over its middle axis:
// y = (x − mean)/sqrt(var + eps)·scale + bias with the mean and (biased)
// variance over n, scale and bias indexed by the position along n (nil:
// none).
type normPlan struct {
	outer, n, inner int
	eps             float32
	scale, bias     []float32 // n values or nil
	mean, rstd      []float32 // inner values each (scratch)
}

func newNormPlan(outer, n, inner int, eps float32, scale, bias []float32) *normPlan {
	return &normPlan{outer: outer, n: n, inner: inner, eps: eps, scale: scale, bias: bias,
		mean: make([]float32, inner), rstd: make([]float32, inner)}
}

// run normalises in into out.
func (p *normPlan) run(out, in []float32) {
	n, inner := p.n, p.inner
	if inner == 1 {
		parallelRows(p.outer, 3*n, func(o0, o1 int) {
			for o := o0; o < o1; o++ {
				normRow(out[o*n:(o+1)*n], in[o*n:(o+1)*n], p.eps, p.scale, p.bias)
			}
		})
		return
	}
	for o := 0; o < p.outer; o++ {
		blk, dst := in[o*n*inner:(o+1)*n*inner], out[o*n*inner:(o+1)*n*inner]
		mean, rstd := p.mean, p.rstd
		clear(mean)
		for k := 0; k < n; k++ {
			for i, v := range blk[k*inner : (k+1)*inner] {
				mean[i] += v
			}
		}
		for i := range mean {
			mean[i] /= float32(n)
		}
		clear(rstd)
		for k := 0; k < n; k++ {
			for i, v := range blk[k*inner : (k+1)*inner] {
				d := v - mean[i]
				rstd[i] += d * d
			}
		}
		for i, q := range rstd {
			rstd[i] = float32(1 / math.Sqrt(float64(q/float32(n)+p.eps)))
		}
		for k := 0; k < n; k++ {
			g, c := float32(1), float32(0)
			if p.scale != nil {
				g = p.scale[k]
			}
			if p.bias != nil {
				c = p.bias[k]
			}
			row, orow := blk[k*inner:(k+1)*inner], dst[k*inner:(k+1)*inner]
			for i, v := range row {
				orow[i] = (v-mean[i])*rstd[i]*g + c
			}
		}
	}
}

// normRow normalises one row: the mean, then the variance about it (two
// passes), each summed in four float32 partial sums.
func normRow(out, in []float32, eps float32, scale, bias []float32) {
	n := len(in)
	out = out[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += in[i]
		s1 += in[i+1]
		s2 += in[i+2]
		s3 += in[i+3]
	}
	for ; i < n; i++ {
		s0 += in[i]
	}
	mean := (s0 + s1 + s2 + s3) / float32(n)
	s0, s1, s2, s3 = 0, 0, 0, 0
	for i = 0; i+4 <= n; i += 4 {
		d0, d1, d2, d3 := in[i]-mean, in[i+1]-mean, in[i+2]-mean, in[i+3]-mean
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
	}
	for ; i < n; i++ {
		d := in[i] - mean
		s0 += d * d
	}
	rstd := float32(1 / math.Sqrt(float64((s0+s1+s2+s3)/float32(n)+eps)))
	switch {
	case scale != nil && bias != nil:
		scale, bias = scale[:n], bias[:n]
		for k, v := range in {
			out[k] = (v-mean)*rstd*scale[k] + bias[k]
		}
	case scale != nil:
		scale = scale[:n]
		for k, v := range in {
			out[k] = (v - mean) * rstd * scale[k]
		}
	default:
		for k, v := range in {
			out[k] = (v - mean) * rstd
		}
		if bias != nil {
			bias = bias[:n]
			for k := range out {
				out[k] += bias[k]
			}
		}
	}
}

// layerNormOp is LayerNormalization (opset 17): over the axes from axis
// on, with Scale and the optional B broadcast to them. Only the output Y is
// computed (Mean and InvStdDev are training outputs).
func layerNormOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	r := len(x.shape)
	ax, err := normAxis(a.int("axis", -1), r)
	if err != nil {
		fail("%v", err)
	}
	eps := a.float("epsilon", 1e-5)
	a.ignore("stash_type") // computed in float32 with float64 sums either way
	norm := x.shape[ax:]
	scale := broadcastConst(constant(ins, 1, "Scale"), norm, "Scale")
	var bias []float32
	if opt(ins, 2) != nil {
		bias = broadcastConst(constant(ins, 2, "B"), norm, "B")
	}
	p := newNormPlan(numel(x.shape[:ax]), numel(norm), 1, eps, scale, bias)
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) { p.run(out, ins[0]) })
}

// layerNormPerImage: LayerNormalization keeps images apart unless it
// normalises over the batch axis.
func layerNormPerImage(b *builder, a *attrs, ins, outs []*value) bool {
	return batchedFirst(b, a, ins, outs) && axisNot0(a.int("axis", -1), len(ins[0].shape))
}

// broadcastConst returns the values of c broadcast to shape, failing
// unless c broadcasts to it without growing it.
func broadcastConst(c *tens, shape []int, what string) []float32 {
	s, err := shapes.Broadcast(shape, c.shape)
	if err != nil || !slices.Equal(s, shape) {
		fail("%s of shape %v does not broadcast to %v", what, c.shape, shape)
	}
	out := make([]float32, numel(shape))
	bcast(out, shape, out, shape, c.floats(), c.shape, func(_, v float32) float32 { return v })
	return out
}

// instanceNormOp is InstanceNormalization: each channel of each image
// normalised over its spatial positions, then scaled and shifted per
// channel.
func instanceNormOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "input")
	eps := a.float("epsilon", 1e-5)
	if len(x.shape) < 3 {
		fail("input shape %v has no spatial axes", x.shape)
	}
	c := x.shape[1]
	scale, bias := constant(ins, 1, "scale").floats(), constant(ins, 2, "B").floats()
	if len(scale) != c || len(bias) != c {
		fail("scale and B have %d and %d values, want %d (channels)", len(scale), len(bias), c)
	}
	planes, n := numel(x.shape[:2]), numel(x.shape[2:])
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		parallelRows(planes, 3*n, func(p0, p1 int) {
			for p := p0; p < p1; p++ {
				o, src := out[p*n:(p+1)*n], in[p*n:(p+1)*n]
				normRow(o, src, eps, nil, nil)
				g, s := scale[p%c], bias[p%c]
				for k := range o {
					o[k] = o[k]*g + s
				}
			}
		})
	})
}

// lrnOp is LRN: x/(bias + alpha/size·Σx²)**beta, the sum over the size
// channels around each one (floor((size−1)/2) before, the rest after).
func lrnOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	size := int(a.int("size", 0))
	alpha, beta, bias := a.float("alpha", 1e-4), a.float("beta", 0.75), a.float("bias", 1)
	if size <= 0 {
		fail("attribute \"size\" = %d must be positive", size)
	}
	if len(x.shape) < 3 {
		fail("input shape %v has no spatial axes", x.shape)
	}
	c, inner := x.shape[1], numel(x.shape[2:])
	lo, hi := (size-1)/2, size-1-(size-1)/2
	sq := make([]float32, c*inner)
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for img := 0; img < x.shape[0]; img++ {
			src, dst := in[img*c*inner:(img+1)*c*inner], out[img*c*inner:(img+1)*c*inner]
			for k, v := range src {
				sq[k] = v * v
			}
			for ch := 0; ch < c; ch++ {
				c0, c1 := max(0, ch-lo), min(c-1, ch+hi)
				row := dst[ch*inner : (ch+1)*inner]
				clear(row)
				for j := c0; j <= c1; j++ {
					for i, v := range sq[j*inner : (j+1)*inner] {
						row[i] += v
					}
				}
				for i, s := range row {
					row[i] = src[ch*inner+i] / float32(math.Pow(float64(bias+alpha/float32(size)*s), float64(beta)))
				}
			}
		}
	})
}

// fuseLayerNorm recognises, from the ReduceMean being built (of x, over
// the reduced axes red, keeping them), the layer normalisation of x as
// exporters write it before LayerNormalization:
//
//	m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2) or Mul(d, d))
//	y = Div(d, Sqrt(Add(v, eps)))  [then Mul(y, scale), Add(y, bias)]
//
// with every intermediate value used only there, and compiles it into one
// op (normPlan). It returns the op's value and the name it stands for, or
// ok=false when the graph does not match.
func (b *builder) fuseLayerNorm(x *value, red []bool) (v *value, out string, ok bool) {
	// The normalised axes must be one block.
	a0, a1 := slices.Index(red, true), -1
	for k, r := range red {
		if r {
			a1 = k
		}
	}
	if a0 < 0 {
		return nil, "", false
	}
	for k := a0; k <= a1; k++ {
		if !red[k] {
			return nil, "", false
		}
	}
	n := b.node()
	xname := n.inputs[0]
	m := b.pattern()
	sub := m.only(n.outputs[0], "Sub")
	if sub == nil || sub.inputs[0] != xname || sub.inputs[1] != n.outputs[0] {
		return nil, "", false
	}
	d := sub.outputs[0]
	cs := b.p.consumers[d]
	if len(cs) != 2 || b.p.isOutput[d] {
		return nil, "", false
	}
	var sq, div *onode
	for _, j := range cs {
		nj := &b.p.nodes[j]
		switch {
		case nj.op == "Pow" && len(nj.inputs) == 2 && nj.inputs[0] == d && m.scalar(nj.inputs[1]) == 2:
			sq = nj
		case nj.op == "Mul" && len(nj.inputs) == 2 && nj.inputs[0] == d && nj.inputs[1] == d:
			sq = nj
		case nj.op == "Div" && len(nj.inputs) == 2 && nj.inputs[0] == d:
			div = nj
		}
		m.take(j)
	}
	if sq == nil || div == nil {
		return nil, "", false
	}
	mean2 := m.only(sq.outputs[0], "ReduceMean")
	if mean2 == nil || !m.sameReduce(n, mean2, len(x.shape)) {
		return nil, "", false
	}
	add := m.only(mean2.outputs[0], "Add")
	if add == nil {
		return nil, "", false
	}
	eps := m.scalar(add.inputs[1])
	if add.inputs[0] != mean2.outputs[0] {
		eps = m.scalar(add.inputs[0])
		if add.inputs[1] != mean2.outputs[0] {
			return nil, "", false
		}
	}
	sqrt := m.only(add.outputs[0], "Sqrt")
	if eps < 0 || math.IsNaN(float64(eps)) || sqrt == nil || m.only(sqrt.outputs[0], "Div") != div || div.inputs[1] != sqrt.outputs[0] {
		return nil, "", false
	}
	out = div.outputs[0]
	// Optional scale and bias: constants varying along the normalised
	// axes only.
	normShape := x.shape[a0 : a1+1]
	perAxis := func(name string) []float32 {
		c := m.constant(name)
		if c == nil || len(c.shape) > len(x.shape) {
			return nil
		}
		r := len(x.shape)
		bs := slices.Repeat([]int{1}, r)
		copy(bs[r-len(c.shape):], c.shape)
		for k, d := range bs {
			if d != 1 && (k < a0 || k > a1 || d != x.shape[k]) {
				return nil
			}
		}
		vals := make([]float32, numel(normShape))
		bcast(vals, normShape, vals, normShape, c.floats(), bs[a0:a1+1], func(_, v float32) float32 { return v })
		return vals
	}
	var scale, bias []float32
	if mul := m.only(out, "Mul"); mul != nil {
		if scale = perAxis(mul.otherInput(out)); scale != nil {
			out = mul.outputs[0]
			if add := m.only(out, "Add"); add != nil {
				if bias = perAxis(add.otherInput(out)); bias != nil {
					out = add.outputs[0]
				} else {
					m.untake(add)
				}
			}
		} else {
			m.untake(mul)
		}
	}
	if !m.ok(out) {
		return nil, "", false
	}
	m.commit()
	p := newNormPlan(numel(x.shape[:a0]), numel(normShape), numel(x.shape[a1+1:]), eps, scale, bias)
	v = b.emit(x.shape, []*value{x}, func(dst []float32, ins [][]float32) { p.run(dst, ins[0]) })
	return v, out, true
}
