//go:build gpu

package cuda

import "fmt"

// Tap is one output row's (or column's) linear interpolation: input
// indices I0, I1 with weights W0, W1 (nn/resize.go computes them).
type Tap struct {
	I0, I1 int
	W0, W1 float32
}

// Resize is a bilinear resize prepared on the device.
type Resize struct {
	d              *Device
	yi, yw, xi, xw *Buffer
	planes, ih, iw int
	oh, ow         int
}

// NewResizeLinear prepares the bilinear resize of planes ih×iw planes to
// len(ys)×len(xs), output row y reading input rows ys[y].I0 and ys[y].I1
// (columns likewise); each output is computed as nn/resize.go does.
func (d *Device) NewResizeLinear(planes, ih, iw int, ys, xs []Tap) (*Resize, error) {
	oh, ow := len(ys), len(xs)
	if planes <= 0 || ih <= 0 || iw <= 0 || oh == 0 || ow == 0 {
		return nil, fmt.Errorf("cuda: NewResizeLinear: %d planes %d×%d to %d×%d", planes, ih, iw, oh, ow)
	}
	if _, err := numel([]int{planes, max(ih, oh), max(iw, ow)}); err != nil {
		return nil, fmt.Errorf("cuda: NewResizeLinear: %w", err)
	}
	split := func(taps []Tap, in int, what string) ([]int32, []float32, error) {
		idx, w := make([]int32, 2*len(taps)), make([]float32, 2*len(taps))
		for i, t := range taps {
			if t.I0 < 0 || t.I0 >= in || t.I1 < 0 || t.I1 >= in {
				return nil, nil, fmt.Errorf("cuda: NewResizeLinear: %s tap %d reads %d and %d of %d", what, i, t.I0, t.I1, in)
			}
			idx[2*i], idx[2*i+1], w[2*i], w[2*i+1] = int32(t.I0), int32(t.I1), t.W0, t.W1
		}
		return idx, w, nil
	}
	yi, yw, err := split(ys, ih, "row")
	if err != nil {
		return nil, err
	}
	xi, xw, err := split(xs, iw, "column")
	if err != nil {
		return nil, err
	}
	r := &Resize{d: d, planes: planes, ih: ih, iw: iw, oh: oh, ow: ow}
	if r.yi, err = d.UploadInt32(yi); err == nil {
		if r.yw, err = d.Upload(yw); err == nil {
			if r.xi, err = d.UploadInt32(xi); err == nil {
				r.xw, err = d.Upload(xw)
			}
		}
	}
	if err != nil {
		r.Free()
		return nil, err
	}
	return r, nil
}

// Run resizes src into dst.
func (r *Resize) Run(dst, src *Buffer) error {
	if err := r.d.valid("Resize input", src, r.planes*r.ih*r.iw); err != nil {
		return err
	}
	if err := r.d.valid("Resize output", dst, r.planes*r.oh*r.ow); err != nil {
		return err
	}
	p := resizeParams{X: src.ptr, YIdx: r.yi.ptr, YW: r.yw.ptr, XIdx: r.xi.ptr, XW: r.xw.ptr, Y: dst.ptr,
		Planes: int32(r.planes), IH: int32(r.ih), IW: int32(r.iw), OH: int32(r.oh), OW: int32(r.ow)}
	grid, block := blocks256(r.planes * r.oh * r.ow)
	return launch(r.d, kResizeLinear, grid, block, &p)
}

// Free releases the taps.
func (r *Resize) Free() error {
	return FreeAll(r.yi, r.yw, r.xi, r.xw)
}
