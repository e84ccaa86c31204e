//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/kernels"
)

// ConvSpec describes a convolution to prepare on the device: the CPU
// kernels' (kernels.NewConv) shape, weights and fused activation, plus an
// optional per-channel scale and shift applied after the bias (a
// BatchNormalization kept apart; nn folds it into Weight and Bias
// instead, as on the CPU).
type ConvSpec struct {
	Shape  kernels.ConvShape
	Weight []float32 // [OutC, InC/Groups, KH, KW]
	Bias   []float32 // [OutC], or nil
	Scale  []float32 // [OutC], or nil; with Shift
	Shift  []float32 // [OutC], or nil; with Scale
	Act    kernels.Activation
}

// Conv is a convolution whose weights are on the device.
type Conv struct {
	d                     *Device
	s                     kernels.ConvShape
	w, bias, scale, shift *Buffer
	act                   kernels.Activation
	direct                bool
}

// directMaxChannels is the largest number of output channels per group
// that conv2d_direct handles; above it conv2d_tiled's 64-channel tiles
// are at least a quarter full.
const directMaxChannels = 16

// NewConv validates spec and uploads its weights.
func (d *Device) NewConv(spec ConvSpec) (*Conv, error) {
	s := spec.Shape
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("cuda: NewConv: %w", err)
	}
	if want := s.OutC * (s.InC / s.Groups) * s.KH * s.KW; len(spec.Weight) != want {
		return nil, fmt.Errorf("cuda: NewConv: weight has %d values, shape %+v needs %d", len(spec.Weight), s, want)
	}
	for _, v := range []struct {
		name string
		x    []float32
	}{{"bias", spec.Bias}, {"scale", spec.Scale}, {"shift", spec.Shift}} {
		if v.x != nil && len(v.x) != s.OutC {
			return nil, fmt.Errorf("cuda: NewConv: %s has %d values, want %d", v.name, len(v.x), s.OutC)
		}
	}
	if (spec.Scale == nil) != (spec.Shift == nil) {
		return nil, fmt.Errorf("cuda: NewConv: scale and shift go together")
	}
	switch spec.Act.Kind {
	case kernels.ActNone, kernels.ActRelu, kernels.ActLeakyRelu, kernels.ActClip:
	default:
		return nil, fmt.Errorf("cuda: NewConv: unknown activation kind %d", spec.Act.Kind)
	}
	if s.InC*s.InH*s.InW > maxElems || s.OutC*s.OutH()*s.OutW() > maxElems ||
		s.Groups > 65535 || s.OutC/s.Groups > 65535*64 {
		return nil, fmt.Errorf("cuda: NewConv: shape %+v is too large", s)
	}
	c := &Conv{d: d, s: s, act: spec.Act, direct: s.OutC/s.Groups <= directMaxChannels}
	var err error
	upload := func(x []float32) *Buffer {
		if x == nil || err != nil {
			return nil
		}
		var b *Buffer
		b, err = d.Upload(x)
		return b
	}
	c.w, c.bias, c.scale, c.shift = upload(spec.Weight), upload(spec.Bias), upload(spec.Scale), upload(spec.Shift)
	if err != nil {
		c.Free()
		return nil, err
	}
	return c, nil
}

// Shape returns the convolution's shape.
func (c *Conv) Shape() kernels.ConvShape { return c.s }

// Strategy names the kernel that runs the convolution: "tiled" (an
// implicit GEMM through shared memory) or "direct" (one thread per
// output, for few channels per group, as depthwise layers have).
func (c *Conv) Strategy() string {
	if c.direct {
		return "direct"
	}
	return "tiled"
}

// Free releases the weights.
func (c *Conv) Free() error {
	return FreeAll(c.w, c.bias, c.scale, c.shift)
}

// Forward computes dst = act(conv(src) + bias) (scaled and shifted when
// the spec says so) for n images: src is [n, InC, InH, InW], dst
// [n, OutC, OutH, OutW].
func (c *Conv) Forward(dst, src *Buffer, n int) error {
	osz := c.s.OutC * c.s.OutH() * c.s.OutW()
	return c.run("Forward", dst, 0, osz, src, nil, n)
}

// ForwardAdd is Forward with res, shaped like dst, added before the
// activation (a residual connection). res may be dst.
func (c *Conv) ForwardAdd(dst, src, res *Buffer, n int) error {
	if res == nil {
		return fmt.Errorf("cuda: Conv.ForwardAdd: nil residual")
	}
	osz := c.s.OutC * c.s.OutH() * c.s.OutW()
	return c.run("ForwardAdd", dst, 0, osz, src, res, n)
}

// ForwardInto is Forward writing image i's output at
// dst[i·stride+off:], a slot of a larger tensor (a Concat along channels
// written in place).
func (c *Conv) ForwardInto(dst *Buffer, off, stride int, src *Buffer, n int) error {
	return c.run("ForwardInto", dst, off, stride, src, nil, n)
}

func (c *Conv) run(what string, dst *Buffer, off, stride int, src, res *Buffer, n int) error {
	s := c.s
	oh, ow := s.OutH(), s.OutW()
	isz, osz := s.InC*s.InH*s.InW, s.OutC*oh*ow
	what = "Conv." + what
	switch {
	case n < 0 || off < 0 || stride < osz || off+osz > stride && n > 1:
		return fmt.Errorf("cuda: %s: %d images at offset %d, stride %d: want n ≥ 0 and slots of %d values", what, n, off, stride, osz)
	case n == 0:
		return nil
	case n > maxElems/isz || n > maxElems/stride || n > maxElems/(oh*ow) || n > maxElems/osz:
		return fmt.Errorf("cuda: %s: %d images of %+v are too many for one call", what, n, s)
	}
	if err := c.d.valid(what+" input", src, n*isz); err != nil {
		return err
	}
	if err := c.d.valid(what+" output", dst, (n-1)*stride+off+osz); err != nil {
		return err
	}
	p := convParams{
		X: src.ptr, W: c.w.ptr, Y: dst.ptr,
		N: int32(n), IC: int32(s.InC), IH: int32(s.InH), IW: int32(s.InW),
		OC: int32(s.OutC), OH: int32(oh), OW: int32(ow), KH: int32(s.KH), KW: int32(s.KW),
		StrideH: int32(s.StrideH), StrideW: int32(s.StrideW), PadH: int32(s.PadTop), PadW: int32(s.PadLeft),
		DilH: int32(s.DilH), DilW: int32(s.DilW), Groups: int32(s.Groups),
		YOffset: int32(off), YBatchStride: int32(stride),
		Act: int32(c.act.Kind), Alpha: c.act.Alpha, Lo: c.act.Min, Hi: c.act.Max,
	}
	if c.bias != nil {
		p.Bias = c.bias.ptr
	}
	if c.scale != nil {
		p.Scale, p.Shift = c.scale.ptr, c.shift.ptr
	}
	if res != nil {
		if err := c.d.valid(what+" residual", res, (n-1)*stride+off+osz); err != nil {
			return err
		}
		p.Res = res.ptr
	}
	if c.direct {
		grid, block := blocks256(n * osz)
		return launch(c.d, kConv2dDirect, grid, block, &p)
	}
	ocg := s.OutC / s.Groups
	grid := [3]uint32{uint32(ceilDiv(n*oh*ow, 64)), uint32(ceilDiv(ocg, 64)), uint32(s.Groups)}
	return launch(c.d, kConv2dTiled, grid, [3]uint32{256, 1, 1}, &p)
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
