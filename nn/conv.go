package nn

import (
	"math"
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// Convolution (with the BatchNormalization, residual Add and activation it
// absorbs), BatchNormalization, and pooling.

// convKey identifies a prepared convolution kernel.
type convKey struct {
	node  int
	shape kernels.ConvShape
}

func convOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	w := constant(ins, 1, "W")
	var bias []float32
	if opt(ins, 2) != nil {
		bias = constant(ins, 2, "B").floats()
	}
	if len(x.shape) != 4 || len(w.shape) != 4 {
		fail("only 2-D convolution is supported (input %v, weight %v)", x.shape, w.shape)
	}
	s := kernels.ConvShape{
		InC: x.shape[1], InH: x.shape[2], InW: x.shape[3],
		OutC: w.shape[0], KH: w.shape[2], KW: w.shape[3],
		Groups: int(a.int("group", 1)),
	}
	if ks := a.ints("kernel_shape", nil); ks != nil && (len(ks) != 2 || int(ks[0]) != s.KH || int(ks[1]) != s.KW) {
		fail("attribute \"kernel_shape\" %v does not match weight shape %v", ks, w.shape)
	}
	if s.Groups <= 0 || s.InC%s.Groups != 0 || w.shape[1]*s.Groups != s.InC {
		fail("weight %v does not fit input %v with group=%d", w.shape, x.shape, s.Groups)
	}
	var pads [4]int
	s.StrideH, s.StrideW, s.DilH, s.DilW, pads = b.window(a, [2]int{s.KH, s.KW}, [2]int{s.InH, s.InW})
	s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = pads[0], pads[1], pads[2], pads[3]
	if err := s.Validate(); err != nil {
		fail("%v", err)
	}
	if bias != nil && len(bias) != s.OutC {
		fail("bias has %d values, want %d", len(bias), s.OutC)
	}
	shape := []int{x.shape[0], s.OutC, s.OutH(), s.OutW()}
	b.checkShape(shape)
	f := b.fuseConv(s.OutC, shape)
	weight := w.f
	if f.scale != nil {
		// Fold the BatchNormalization into the weights and bias.
		weight = slices.Clone(weight)
		per := len(weight) / s.OutC
		nb := make([]float32, s.OutC)
		for o := 0; o < s.OutC; o++ {
			for k := range weight[o*per : (o+1)*per] {
				weight[o*per+k] *= f.scale[o]
			}
			var b0 float32
			if bias != nil {
				b0 = bias[o]
			}
			nb[o] = b0*f.scale[o] + f.shift[o]
		}
		bias = nb
	}
	key := convKey{b.idx, s}
	b.p.mu.Lock()
	conv, ok := b.p.convs[key]
	if !ok {
		var err error
		if conv, err = kernels.NewConv(s, weight, bias, f.act); err != nil {
			b.p.mu.Unlock()
			fail("%v", err)
		}
		b.p.convs[key] = conv
	}
	b.p.mu.Unlock()
	isz, osz := numel(x.shape[1:]), numel(shape[1:])
	batch := x.shape[0]
	dev := devConv{shape: s, batch: batch, weight: weight, bias: bias, act: f.act}
	if j, ps := b.fusableMaxPool(f, shape); j >= 0 {
		if cp, err := kernels.NewConvMaxPool(conv, ps); err == nil {
			// The MaxPool after it, computed with it band by band.
			pshape := []int{batch, s.OutC, ps.OutH, ps.OutW}
			b.checkShape(pshape)
			posz := numel(pshape[1:])
			dev.pool = &ps
			v := b.onDevice(b.emit(pshape, []*value{x}, func(dst []float32, ins [][]float32) {
				forEachChunk(batch, func(i0, i1 int) {
					cp.Forward(dst[i0*posz:i1*posz], ins[0][i0*isz:i1*isz], i1-i0)
				})
			}), dev)
			b.skip[j] = true
			b.env[b.p.nodes[j].outputs[0]] = v
			return v
		}
	}
	if f.res != nil {
		v := b.onDevice(b.emit(shape, []*value{x, f.res}, func(dst []float32, ins [][]float32) {
			forEachChunk(batch, func(i0, i1 int) {
				conv.ForwardAdd(dst[i0*osz:i1*osz], ins[0][i0*isz:i1*isz], ins[1][i0*osz:i1*osz], i1-i0)
			})
		}), dev)
		b.env[f.out] = v
		return v
	}
	v := b.onDevice(b.emit(shape, []*value{x}, func(dst []float32, ins [][]float32) {
		forEachChunk(batch, func(i0, i1 int) {
			conv.Forward(dst[i0*osz:i1*osz], ins[0][i0*isz:i1*isz], i1-i0)
		})
	}), dev)
	if v.op != nil {
		v.op.fnInto = func(dst []float32, off, stride int, ins [][]float32) {
			forEachChunk(batch, func(i0, i1 int) {
				for i := i0; i < i1; i++ {
					conv.Forward(dst[i*stride+off:i*stride+off+osz], ins[0][i*isz:(i+1)*isz], 1)
				}
			})
		}
	}
	if f.out != b.node().outputs[0] {
		b.env[f.out] = v
	}
	return v
}

// convFusion is what a convolution absorbs of the nodes after it, in this
// order: a BatchNormalization (folded into its weights and bias), a
// residual Add (added in its epilogue) and an activation (applied in its
// epilogue).
type convFusion struct {
	scale, shift []float32          // the BatchNormalization's, or nil
	res          *value             // the Add's other operand, or nil
	act          kernels.Activation // the activation (ActNone: none)
	out          string             // output of the last node absorbed; the Conv's own if none
}

// fuseConv decides which of the nodes after the Conv being built, whose
// output has outC channels and the given shape, it absorbs, and marks them
// as compiled.
func (b *builder) fuseConv(outC int, shape []int) convFusion {
	f := convFusion{out: b.node().outputs[0]}
	if j := b.consumer(f.out); j >= 0 && b.p.nodes[j].op == "BatchNormalization" {
		bn := &b.p.nodes[j]
		if scale, shift, ok := b.bnParams(bn, outC); ok {
			f.scale, f.shift = scale, shift
			b.skip[j] = true
			f.out = bn.outputs[0]
		}
	}
	// A residual Add (the activation after it too).
	if j, r := b.residualAdd(f.out, shape); j >= 0 {
		f.res = r
		b.skip[j] = true
		f.out = b.p.nodes[j].outputs[0]
	}
	if j := b.consumer(f.out); j >= 0 {
		if act, ok := b.fusableAct(j); ok {
			f.act = act
			b.skip[j] = true
			f.out = b.p.nodes[j].outputs[0]
		}
	}
	return f
}

// fusableMaxPool reports whether the only consumer of the output of a
// convolution fused as f (of the given shape) is a MaxPool that the
// convolution could compute with it (kernels.NewConvMaxPool decides
// whether it can; a residual Add in f rules it out): it returns the
// MaxPool's node index and shape, or -1.
func (b *builder) fusableMaxPool(f convFusion, shape []int) (int, kernels.PoolShape) {
	var ps kernels.PoolShape
	if f.res != nil {
		return -1, ps
	}
	j := b.consumer(f.out)
	if j < 0 || b.p.nodes[j].op != "MaxPool" {
		return -1, ps
	}
	n := &b.p.nodes[j]
	if !attempt(func() {
		a := newAttrs(n)
		ps = b.poolWindow(true, n, a, shape).shape(shape[2], shape[3])
		a.checkUnused()
	}) {
		return -1, ps
	}
	return j, ps
}

// residualAdd reports whether the only consumer of the value named out (a
// convolution's output of the given shape) is an Add of out and another
// runtime value of the same shape computed before node b.idx (a residual
// connection), which the convolution can add in its epilogue. It returns
// the Add's node index and the other operand, or -1.
func (b *builder) residualAdd(out string, shape []int) (int, *value) {
	cs := b.p.consumers[out]
	if len(cs) != 1 || b.p.isOutput[out] {
		return -1, nil
	}
	j := cs[0]
	n := &b.p.nodes[j]
	if j <= b.idx || n.op != "Add" || len(n.inputs) != 2 || len(n.outputs) != 1 || len(n.attrs) != 0 {
		return -1, nil
	}
	other := n.otherInput(out)
	if other == out || (n.inputs[0] != out && n.inputs[1] != out) {
		return -1, nil // out + out, or not an input
	}
	v, ok := b.env[other]
	if !ok || v.c != nil || v.n == nil || !slices.Equal(v.shape, shape) {
		return -1, nil
	}
	return j, v
}

// bnParams returns the per-channel scale and shift of a BatchNormalization
// node whose parameters are constants, checking its attributes.
func (b *builder) bnParams(n *onode, c int) (scale, shift []float32, ok bool) {
	for k := 1; k <= 4; k++ {
		if k >= len(n.inputs) {
			return nil, nil, false
		}
		v, ok := b.env[n.inputs[k]]
		if !ok || v.c == nil || len(v.c.f) != c {
			return nil, nil, false
		}
	}
	for _, o := range n.outputs[1:] {
		if o != "" && (len(b.p.consumers[o]) > 0 || b.p.isOutput[o]) {
			return nil, nil, false
		}
	}
	a := newAttrs(n)
	eps := b.bnAttrs(a)
	a.checkUnused()
	g, be, mean, vr := b.env[n.inputs[1]].c.f, b.env[n.inputs[2]].c.f, b.env[n.inputs[3]].c.f, b.env[n.inputs[4]].c.f
	scale, shift = make([]float32, c), make([]float32, c)
	for o := 0; o < c; o++ {
		scale[o] = g[o] / float32(math.Sqrt(float64(vr[o]+eps)))
		shift[o] = be[o] - mean[o]*scale[o]
	}
	return scale, shift, true
}

func (b *builder) bnAttrs(a *attrs) float32 {
	eps := a.float("epsilon", 1e-5)
	a.ignore("momentum", "is_test", "consumed_inputs")
	if a.int("spatial", 1) != 1 {
		fail("attribute \"spatial\" = 0 is not supported")
	}
	if a.int("training_mode", 0) != 0 {
		fail("attribute \"training_mode\" = 1 is not supported")
	}
	return eps
}

// fusableAct reports whether node j is an activation the convolution
// kernels can apply (its operator has an act function, which accepts its
// attributes and inputs), and which.
func (b *builder) fusableAct(j int) (act kernels.Activation, ok bool) {
	n := &b.p.nodes[j]
	def := opTable[n.op]
	if def.act == nil || len(n.outputs) != 1 {
		return act, false
	}
	ins := make([]*value, len(n.inputs))
	for k, name := range n.inputs {
		if k == 0 || name == "" {
			continue // input 0 is the output of the Conv being built
		}
		v, ok := b.env[name]
		if !ok {
			return act, false
		}
		ins[k] = v
	}
	ok = attempt(func() {
		a := newAttrs(n)
		act = def.act(b, a, ins)
		a.checkUnused()
	})
	return act, ok
}

// forEachChunk splits [0, n) over up to kernels.FreeThreads goroutines
// (one, in a worker of splitRun: its group of images on its own core).
func forEachChunk(n int, f func(i0, i1 int)) { kernels.ParallelFor(n, kernels.FreeThreads(), f) }

// window reads the strides, dilations and pads of a 2-D Conv or pooling
// node for kernel size k over input size in.
func (b *builder) window(a *attrs, k, in [2]int) (sh, sw, dh, dw int, pads [4]int) {
	strides := a.ints("strides", []int64{1, 1})
	dil := a.ints("dilations", []int64{1, 1})
	if len(strides) != 2 || len(dil) != 2 {
		fail("attributes \"strides\" %v and \"dilations\" %v must have 2 values", strides, dil)
	}
	for _, v := range append(slices.Clone(strides), dil...) {
		if v <= 0 {
			fail("strides %v and dilations %v must be positive", strides, dil)
		}
		if v > b.p.opt.MaxElements {
			b.overLimit("strides %v and dilations %v: more than %d", strides, dil, b.p.opt.MaxElements)
		}
	}
	sh, sw, dh, dw = int(strides[0]), int(strides[1]), int(dil[0]), int(dil[1])
	autoPad := a.str("auto_pad", "NOTSET")
	p := a.ints("pads", nil)
	switch autoPad {
	case "NOTSET":
		if p == nil {
			p = []int64{0, 0, 0, 0}
		}
		if len(p) != 4 {
			fail("attribute \"pads\" %v must have 4 values", p)
		}
		for i, v := range p {
			if v < 0 {
				fail("attribute \"pads\" %v must be non-negative", p)
			}
			if v > b.p.opt.MaxElements {
				b.overLimit("attribute \"pads\" %v: more than %d", p, b.p.opt.MaxElements)
			}
			pads[i] = int(v)
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		st := [2]int{sh, sw}
		dl := [2]int{dh, dw}
		for d := 0; d < 2; d++ {
			out := (in[d] + st[d] - 1) / st[d]
			total := max(0, (out-1)*st[d]+(k[d]-1)*dl[d]+1-in[d])
			lo := total / 2
			if autoPad == "SAME_LOWER" {
				lo = total - total/2
			}
			pads[d], pads[d+2] = lo, total-lo
		}
	default:
		fail("attribute \"auto_pad\" = %q is not supported", autoPad)
	}
	return
}

func batchNormOp(b *builder, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	eps := b.bnAttrs(a)
	if len(x.shape) < 2 {
		fail("input shape %v has no channel axis", x.shape)
	}
	c := x.shape[1]
	g, be, mean, vr := constant(ins, 1, "scale").floats(), constant(ins, 2, "B").floats(), constant(ins, 3, "mean").floats(), constant(ins, 4, "var").floats()
	if len(g) != c || len(be) != c || len(mean) != c || len(vr) != c {
		fail("parameters do not have %d channels", c)
	}
	scale, shift := make([]float32, c), make([]float32, c)
	for o := 0; o < c; o++ {
		scale[o] = g[o] / float32(math.Sqrt(float64(vr[o]+eps)))
		shift[o] = be[o] - mean[o]*scale[o]
	}
	inner := numel(x.shape[2:])
	return b.onDevice(b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for p := 0; p < len(in); p += inner {
			ch := (p / inner) % c
			sc, sf := scale[ch], shift[ch]
			for k, v := range in[p : p+inner] {
				out[p+k] = v*sc + sf
			}
		}
	}), devAffine{scale, shift, c, inner})
}

// pool returns the build function of MaxPool (isMax) or AveragePool.
func pool(isMax bool) func(b *builder, a *attrs, ins []*value) *value {
	return func(b *builder, a *attrs, ins []*value) *value { return b.poolOp(isMax, a, ins) }
}

// poolWindow is a 2-D pooling node's window over its input, read from its
// attributes.
type poolWindow struct {
	kh, kw, sh, sw, dh, dw int
	pads                   [4]int // top, left, bottom, right
	include                bool   // count_include_pad
	oh, ow                 int    // output size
}

// poolWindow reads the attributes of the pooling node n (MaxPool when
// isMax, else AveragePool) over an input of shape x (4-D).
func (b *builder) poolWindow(isMax bool, n *onode, a *attrs, x []int) poolWindow {
	if len(n.outputs) > 1 && n.outputs[1] != "" && (len(b.p.consumers[n.outputs[1]]) > 0 || b.p.isOutput[n.outputs[1]]) {
		fail("output \"Indices\" is not supported")
	}
	if len(x) != 4 {
		fail("only 2-D pooling (4-D input) is supported, input has shape %v", x)
	}
	ks := a.ints("kernel_shape", nil)
	if len(ks) != 2 || ks[0] <= 0 || ks[1] <= 0 {
		fail("attribute \"kernel_shape\" %v must have 2 positive values", ks)
	}
	if ks[0] > b.p.opt.MaxElements || ks[1] > b.p.opt.MaxElements {
		b.overLimit("attribute \"kernel_shape\" %v: more than %d", ks, b.p.opt.MaxElements)
	}
	w := poolWindow{kh: int(ks[0]), kw: int(ks[1])}
	ih, iw := x[2], x[3]
	w.sh, w.sw, w.dh, w.dw, w.pads = b.window(a, [2]int{w.kh, w.kw}, [2]int{ih, iw})
	if w.pads[0] >= w.kh || w.pads[2] >= w.kh || w.pads[1] >= w.kw || w.pads[3] >= w.kw {
		// As ONNX Runtime: a window could lie entirely in the padding.
		fail("pads %v must be smaller than kernel_shape %v", w.pads, ks)
	}
	ceil := a.int("ceil_mode", 0) != 0
	a.ignore("storage_order")
	w.include = a.int("count_include_pad", 0) != 0
	if !isMax && (w.dh != 1 || w.dw != 1) {
		fail("AveragePool with dilations is not supported")
	}
	outSize := func(in, k, s, d, pb, pe int) int {
		span := in + pb + pe - ((k-1)*d + 1)
		if span < 0 {
			fail("kernel %v larger than padded input %v", ks, x)
		}
		o := span/s + 1
		if ceil {
			o = (span+s-1)/s + 1
			if (o-1)*s >= in+pb { // last window would start in the padding
				o--
			}
		}
		return o
	}
	w.oh = outSize(ih, w.kh, w.sh, w.dh, w.pads[0], w.pads[2])
	w.ow = outSize(iw, w.kw, w.sw, w.dw, w.pads[1], w.pads[3])
	return w
}

// shape returns the kernels' shape of a pooling with window w over planes
// of ih×iw (the bottom and right pads are implied by the output size).
func (w poolWindow) shape(ih, iw int) kernels.PoolShape {
	return kernels.PoolShape{InH: ih, InW: iw, OutH: w.oh, OutW: w.ow, KH: w.kh, KW: w.kw,
		StrideH: w.sh, StrideW: w.sw, PadTop: w.pads[0], PadLeft: w.pads[1], DilH: w.dh, DilW: w.dw}
}

func (b *builder) poolOp(isMax bool, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	pw := b.poolWindow(isMax, b.node(), a, x.shape)
	kh, kw, sh, sw, dh, dw, pads, include := pw.kh, pw.kw, pw.sh, pw.sw, pw.dh, pw.dw, pw.pads, pw.include
	ih, iw, oh, ow := x.shape[2], x.shape[3], pw.oh, pw.ow
	shape := []int{x.shape[0], x.shape[1], oh, ow}
	planes := x.shape[0] * x.shape[1]
	if isMax {
		if ps := pw.shape(ih, iw); ps.Validate() == nil {
			return b.onDevice(b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
				kernels.MaxPool(out, ins[0], planes, ps)
			}), devPool{max: true, planes: planes, shape: ps})
		}
	}
	v := b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		forEachChunk(planes, func(p0, p1 int) {
			for p := p0; p < p1; p++ {
				src := in[p*ih*iw : (p+1)*ih*iw]
				dst := out[p*oh*ow : (p+1)*oh*ow]
				for y := 0; y < oh; y++ {
					y0 := y*sh - pads[0]
					for xx := 0; xx < ow; xx++ {
						x0 := xx*sw - pads[1]
						if isMax {
							m := float32(math.Inf(-1))
							for ky := 0; ky < kh; ky++ {
								iy := y0 + ky*dh
								if iy < 0 || iy >= ih {
									continue
								}
								row := src[iy*iw:]
								for kx := 0; kx < kw; kx++ {
									ix := x0 + kx*dw
									if ix >= 0 && ix < iw && row[ix] > m {
										m = row[ix]
									}
								}
							}
							dst[y*ow+xx] = m
							continue
						}
						ye, xe := min(y0+kh, ih+pads[2]), min(x0+kw, iw+pads[3])
						area := (ye - y0) * (xe - x0)
						ys, xs := max(y0, 0), max(x0, 0)
						ye, xe = min(ye, ih), min(xe, iw)
						var s float32
						for iy := ys; iy < ye; iy++ {
							for _, v := range src[iy*iw+xs : iy*iw+xe] {
								s += v
							}
						}
						if !include {
							area = (ye - ys) * (xe - xs)
						}
						dst[y*ow+xx] = s / float32(area)
					}
				}
			}
		})
	})
	if !isMax {
		b.onDevice(v, devPool{planes: planes, padBottom: pads[2], padRight: pads[3], countIncludePad: include,
			shape: pw.shape(ih, iw)}) // dilations are 1: checked by poolWindow
	}
	return v
}

// globalPool returns the build function of GlobalMaxPool (isMax) or
// GlobalAveragePool.
func globalPool(isMax bool) func(b *builder, a *attrs, ins []*value) *value {
	return func(b *builder, _ *attrs, ins []*value) *value { return b.globalPoolOp(isMax, need(ins, 0, "X")) }
}

func (b *builder) globalPoolOp(isMax bool, x *value) *value {
	if len(x.shape) < 3 {
		fail("input shape %v has no spatial axes", x.shape)
	}
	shape := slices.Clone(x.shape)
	for k := 2; k < len(shape); k++ {
		shape[k] = 1
	}
	inner := numel(x.shape[2:])
	op := "mean"
	if isMax {
		op = "max"
	}
	return b.onDevice(b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		p := 0
		if !isMax {
			// Four planes at a time: four independent chains of additions
			// instead of one, so the adds of different planes overlap in
			// the pipeline instead of waiting on each other (each plane's
			// sum in the same order: the same results).
			for ; p+4 <= len(out); p += 4 {
				a, b, c, d := in[p*inner:(p+1)*inner], in[(p+1)*inner:(p+2)*inner], in[(p+2)*inner:(p+3)*inner], in[(p+3)*inner:(p+4)*inner]
				var s0, s1, s2, s3 float32
				for i := range a {
					s0 += a[i]
					s1 += b[i]
					s2 += c[i]
					s3 += d[i]
				}
				out[p], out[p+1], out[p+2], out[p+3] = s0/float32(inner), s1/float32(inner), s2/float32(inner), s3/float32(inner)
			}
		}
		for ; p < len(out); p++ {
			plane := in[p*inner : (p+1)*inner]
			if isMax {
				m := float32(math.Inf(-1))
				for _, v := range plane {
					m = max(m, v)
				}
				out[p] = m
				continue
			}
			var s float32
			for _, v := range plane {
				s += v
			}
			out[p] = s / float32(inner)
		}
	}), devReduce{op: op, outer: numel(shape), n: inner, inner: 1})
}
