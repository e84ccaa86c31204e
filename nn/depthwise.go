package nn

import (
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// depthwiseOp compiles a Conv that is a depthwise convolution of stride 1
// or 2 with a kernel larger than 1×1 (ConvNeXt's 7×7, MobileNet's and
// EfficientNet's 3×3 and 5×5) with
// kernels.Depthwise, absorbing what convOp would (a BatchNormalization, a
// residual Add, an activation: see fuseConv); ok=false for any other Conv,
// which convOp compiles.
func depthwiseOp(b *builder, a *attrs, ins []*value) (v *value, ok bool) {
	x, wv := need(ins, 0, "X"), need(ins, 1, "W")
	if len(x.shape) != 4 || wv.c == nil || len(wv.shape) != 4 || a.int("group", 1) != int64(x.shape[1]) {
		return nil, false
	}
	w := wv.c
	s := kernels.ConvShape{
		InC: x.shape[1], InH: x.shape[2], InW: x.shape[3],
		OutC: w.shape[0], KH: w.shape[2], KW: w.shape[3], Groups: x.shape[1],
	}
	if ks := a.ints("kernel_shape", nil); ks != nil && (len(ks) != 2 || int(ks[0]) != s.KH || int(ks[1]) != s.KW) {
		return nil, false // convOp reports it
	}
	var pads [4]int
	s.StrideH, s.StrideW, s.DilH, s.DilW, pads = b.window(a, [2]int{s.KH, s.KW}, [2]int{s.InH, s.InW})
	s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = pads[0], pads[1], pads[2], pads[3]
	var bias []float32
	if opt(ins, 2) != nil {
		bias = constant(ins, 2, "B").floats()
	}
	if !kernels.DepthwiseFits(s) || w.shape[1] != 1 || s.KH*s.KW == 1 || (bias != nil && len(bias) != s.OutC) {
		return nil, false
	}
	shape := []int{x.shape[0], s.OutC, s.OutH(), s.OutW()}
	f := b.fuseConv(s.OutC, shape)
	weight := w.floats()
	if f.scale != nil {
		// Fold the BatchNormalization into the weights and bias.
		weight = slices.Clone(weight)
		per := len(weight) / s.OutC
		nb := make([]float32, s.OutC)
		for o := range nb {
			for k := range weight[o*per : (o+1)*per] {
				weight[o*per+k] *= f.scale[o]
			}
			if bias != nil {
				nb[o] = bias[o] * f.scale[o]
			}
			nb[o] += f.shift[o]
		}
		bias = nb
	}
	d, err := kernels.NewDepthwise(s, weight, bias, f.act)
	if err != nil {
		fail("%v", err)
	}
	batch := x.shape[0]
	dev := devConv{shape: s, batch: batch, weight: weight, bias: bias, act: f.act}
	if f.res != nil {
		v = b.onDevice(b.emit(shape, []*value{x, f.res}, func(dst []float32, ins [][]float32) { d.ForwardAdd(dst, ins[0], ins[1], batch) }), dev)
	} else {
		v = b.onDevice(b.emit(shape, []*value{x}, func(dst []float32, ins [][]float32) { d.Forward(dst, ins[0], batch) }), dev)
		if v.op != nil {
			// Straight into a channel Concat's output (zero-copy Concat,
			// see concatOp): GhostNet's cheap operation feeds one.
			isz, osz := numel(x.shape[1:]), numel(shape[1:])
			v.op.fnInto = func(dst []float32, off, stride int, ins [][]float32) {
				for i := 0; i < batch; i++ {
					d.Forward(dst[i*stride+off:i*stride+off+osz], ins[0][i*isz:(i+1)*isz], 1)
				}
			}
		}
	}
	if f.out != b.node().outputs[0] {
		b.env[f.out] = v
	}
	return v, true
}
