//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/kernels"
)

// MaxPool computes for each of planes planes of src (InH×InW) the maximum
// of every window into dst (OutH×OutW per plane), as kernels.MaxPool:
// padding never wins, a NaN in a window gives NaN.
func (d *Device) MaxPool(dst, src *Buffer, planes int, s kernels.PoolShape) error {
	return d.pool("MaxPool", kMaxPool2d, dst, src, planes, s, 0, 0, false)
}

// AvgPool computes windowed means (ONNX AveragePool without dilation):
// the sum of the window's values inside the input divided by their
// number, or, with countIncludePad, by the size of the window clipped to
// the input padded by PadTop/PadLeft and padBottom/padRight.
func (d *Device) AvgPool(dst, src *Buffer, planes int, s kernels.PoolShape, padBottom, padRight int, countIncludePad bool) error {
	if s.DilH != 1 || s.DilW != 1 {
		return fmt.Errorf("cuda: AvgPool: dilations %d×%d: only 1 is supported", s.DilH, s.DilW)
	}
	if padBottom < 0 || padRight < 0 {
		return fmt.Errorf("cuda: AvgPool: pads %d, %d must be non-negative", padBottom, padRight)
	}
	return d.pool("AvgPool", kAvgPool2d, dst, src, planes, s, padBottom, padRight, countIncludePad)
}

func (d *Device) pool(what string, k kernel, dst, src *Buffer, planes int, s kernels.PoolShape, pb, pr int, include bool) error {
	if err := s.Validate(); err != nil {
		return fmt.Errorf("cuda: %s: %w", what, err)
	}
	isz, osz := s.InH*s.InW, s.OutH*s.OutW
	if planes < 0 || isz > maxElems || osz > maxElems || planes > 0 && (planes > maxElems/isz || planes > maxElems/osz) {
		return fmt.Errorf("cuda: %s: %d planes of %+v: out of range", what, planes, s)
	}
	if planes == 0 {
		return nil
	}
	if err := d.valid(what+" input", src, planes*isz); err != nil {
		return err
	}
	if err := d.valid(what+" output", dst, planes*osz); err != nil {
		return err
	}
	p := poolParams{
		X: src.ptr, Y: dst.ptr,
		Planes: int32(planes), IH: int32(s.InH), IW: int32(s.InW), OH: int32(s.OutH), OW: int32(s.OutW),
		KH: int32(s.KH), KW: int32(s.KW), StrideH: int32(s.StrideH), StrideW: int32(s.StrideW),
		PadTop: int32(s.PadTop), PadLeft: int32(s.PadLeft), PadBottom: int32(pb), PadRight: int32(pr),
		DilH: int32(s.DilH), DilW: int32(s.DilW), CountIncludePad: b32(include),
	}
	grid, block := blocks256(planes * osz)
	return launch(d, k, grid, block, &p)
}
