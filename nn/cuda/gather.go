//go:build gpu

package cuda

import (
	"fmt"

	"github.com/amt-dev/amt/nn/internal/shapes"
)

// Gather is an index-map gather prepared on the device (nn's gatherAxes):
// out[i0,…] = in[maps[0][i0],…], or the fill value where any map entry is
// negative. It implements Slice, Pad, Split, Expand, Gather and
// nearest-neighbour Resize.
type Gather struct {
	d         *Device
	maps      *Buffer
	p         gatherParams
	inN, outN int
}

// NewGather validates maps against the input shape and uploads them.
func (d *Device) NewGather(inShape []int, maps [][]int, fill float32) (*Gather, error) {
	r := len(inShape)
	if len(maps) != r || r == 0 || r > maxDims {
		return nil, fmt.Errorf("cuda: NewGather: %d maps for input shape %v (rank 1 to %d)", len(maps), inShape, maxDims)
	}
	inN, err := numel(inShape)
	if err != nil {
		return nil, fmt.Errorf("cuda: NewGather: %w", err)
	}
	out := make([]int, r)
	var flat []int32
	g := &Gather{d: d, inN: inN, p: gatherParams{NDim: int32(r), Fill: fill}}
	st := shapes.Strides(inShape)
	for k, m := range maps {
		out[k] = len(m)
		g.p.Shape[k], g.p.XStride[k], g.p.MapOff[k] = int32(len(m)), int32(st[k]), int32(len(flat))
		for i, v := range m {
			if v >= inShape[k] {
				return nil, fmt.Errorf("cuda: NewGather: map %d entry %d is %d, axis has %d values", k, i, v, inShape[k])
			}
			flat = append(flat, int32(max(v, -1)))
		}
		if len(flat) > maxElems {
			return nil, fmt.Errorf("cuda: NewGather: maps too long")
		}
	}
	if g.outN, err = numel(out); err != nil {
		return nil, fmt.Errorf("cuda: NewGather: %w", err)
	}
	g.p.N = int32(g.outN)
	if len(flat) > 0 {
		if g.maps, err = d.UploadInt32(flat); err != nil {
			return nil, err
		}
		g.p.Maps = g.maps.ptr
	}
	return g, nil
}

// Run gathers src (the input shape) into dst (the maps' lengths).
func (g *Gather) Run(dst, src *Buffer) error {
	if err := g.d.valid("Gather input", src, g.inN); err != nil {
		return err
	}
	if err := g.d.valid("Gather output", dst, g.outN); err != nil {
		return err
	}
	if g.outN == 0 {
		return nil
	}
	p := g.p
	p.X, p.Y = src.ptr, dst.ptr
	grid, block := blocks256(g.outN)
	return launch(g.d, kGatherAxes, grid, block, &p)
}

// Free releases the maps.
func (g *Gather) Free() error {
	if g.maps == nil {
		return nil
	}
	return g.maps.Free()
}
