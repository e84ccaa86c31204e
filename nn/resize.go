package nn

import "math"

// resizeOp and upsampleOp are the build functions of Resize and Upsample.
func resizeOp(b *builder, a *attrs, ins []*value) *value   { return b.resize(false, a, ins) }
func upsampleOp(b *builder, a *attrs, ins []*value) *value { return b.resize(true, a, ins) }

// resize implements Resize (opsets 10–19 without cubic, antialias or
// tf_crop_and_resize) and Upsample (opsets 7–9) with ONNX Runtime's
// coordinate arithmetic (float32).
func (b *builder) resize(upsample bool, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	r := len(x.shape)
	mode := a.str("mode", "nearest")
	coord, nearest := "asymmetric", "simple"
	var scales []float32
	var sizes []int64
	switch {
	case upsample:
		if b.p.opset < 7 {
			fail("Upsample before opset 7 is not supported")
		}
		if b.p.opset < 9 {
			scales = a.floats("scales", nil)
		} else {
			scales = constant(ins, 1, "scales").floats()
		}
	case b.p.opset < 11:
		scales = constant(ins, 1, "scales").floats()
	default:
		coord = a.str("coordinate_transformation_mode", "half_pixel")
		nearest = a.str("nearest_mode", "round_prefer_floor")
		a.ignore("cubic_coeff_a", "exclude_outside", "extrapolation_value")
		if a.int("antialias", 0) != 0 {
			fail("attribute \"antialias\" = 1 is not supported")
		}
		if a.has("axes") {
			a.get("axes")
			fail("attribute \"axes\" is not supported")
		}
		if p := a.str("keep_aspect_ratio_policy", "stretch"); p != "stretch" {
			fail("attribute \"keep_aspect_ratio_policy\" = %q is not supported", p)
		}
		if v := opt(ins, 2); v != nil {
			scales = constant(ins, 2, "scales").floats()
		}
		if v := opt(ins, 3); v != nil {
			sizes = constant(ins, 3, "sizes").ints()
		}
		if len(scales) > 0 && len(sizes) > 0 {
			fail("both scales and sizes are given")
		}
	}
	switch mode {
	case "nearest", "linear":
	case "bilinear": // Upsample's older name
		if !upsample {
			fail("attribute \"mode\" = %q is not supported", mode)
		}
		mode = "linear"
	default:
		fail("attribute \"mode\" = %q is not supported (nearest and linear are)", mode)
	}
	switch coord {
	case "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric":
	case "tf_half_pixel_for_nearest":
		if mode != "nearest" {
			fail("attribute \"coordinate_transformation_mode\" = %q needs mode nearest", coord)
		}
	default:
		fail("attribute \"coordinate_transformation_mode\" = %q is not supported", coord)
	}
	switch nearest {
	case "simple", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil":
	default:
		fail("attribute \"nearest_mode\" = %q is not supported", nearest)
	}
	if numel(x.shape) == 0 {
		fail("input of shape %v is empty", x.shape)
	}
	out := make([]int, r)
	sc := make([]float32, r)
	switch {
	case len(sizes) > 0:
		if len(sizes) != r {
			fail("sizes %v do not match rank %d", sizes, r)
		}
		for d := range out {
			out[d] = int(sizes[d])
			sc[d] = float32(out[d]) / float32(x.shape[d])
		}
	case len(scales) > 0:
		if len(scales) != r {
			fail("scales %v do not match rank %d", scales, r)
		}
		for d := range out {
			if scales[d] <= 0 {
				fail("scales %v must be positive", scales)
			}
			sc[d] = scales[d]
			o := scales[d] * float32(x.shape[d])
			if !(float64(o) <= float64(b.p.opt.MaxElements)) {
				b.overLimit("scales %v make axis %d of %v %g long", scales, d, x.shape, o)
			}
			out[d] = int(o)
		}
	default:
		fail("neither scales nor sizes is given")
	}
	b.checkShape(out)
	orig := func(d, i int) float32 {
		in, o, s := float32(x.shape[d]), float32(out[d]), sc[d]
		xf := float32(i)
		switch coord {
		case "half_pixel":
			return (xf+0.5)/s - 0.5
		case "pytorch_half_pixel":
			if out[d] > 1 {
				return (xf+0.5)/s - 0.5
			}
			return 0
		case "align_corners":
			if out[d] == 1 {
				return 0
			}
			return xf * (in - 1) / (o - 1)
		case "tf_half_pixel_for_nearest":
			return (xf + 0.5) / s
		}
		return xf / s
	}
	if mode == "nearest" {
		maps := make([][]int, r)
		for d := range maps {
			maps[d] = make([]int, out[d])
			for i := range maps[d] {
				xo := orig(d, i)
				var k int
				switch nearest {
				case "simple":
					if sc[d] < 1 {
						k = int(math.Ceil(float64(xo)))
					} else {
						k = int(xo)
					}
				case "round_prefer_floor":
					if xo == float32(int(xo))+0.5 {
						k = int(xo)
					} else {
						k = int(math.Round(float64(xo)))
					}
				case "round_prefer_ceil":
					k = int(math.Round(float64(xo)))
				case "floor":
					k = int(math.Floor(float64(xo)))
				case "ceil":
					k = int(math.Ceil(float64(xo)))
				}
				maps[d][i] = max(0, min(k, x.shape[d]-1))
			}
		}
		return b.mapsOp(x, maps, 0)
	}
	// Linear: over the last two axes only.
	if r < 2 {
		fail("linear mode needs rank ≥ 2, input has shape %v", x.shape)
	}
	for d := 0; d < r-2; d++ {
		if out[d] != x.shape[d] {
			fail("linear mode resizes only the last two axes; axis %d goes from %d to %d", d, x.shape[d], out[d])
		}
	}
	taps := func(d int) []linearTap {
		t := make([]linearTap, out[d])
		in := x.shape[d]
		for i := range t {
			xo := max(0, min(orig(d, i), float32(in-1)))
			i0 := min(int(xo), in-1)
			i1 := min(i0+1, in-1)
			w0, w1 := float32(math.Abs(float64(xo-float32(i1)))), float32(math.Abs(float64(xo-float32(i0))))
			if i0 == i1 {
				w0, w1 = 0.5, 0.5
			}
			t[i] = linearTap{i0, i1, w0, w1}
		}
		return t
	}
	ty, tx := taps(r-2), taps(r-1)
	ih, iw := x.shape[r-2], x.shape[r-1]
	oh, ow := out[r-2], out[r-1]
	planes := numel(x.shape[:r-2])
	return b.onDevice(b.emit(out, []*value{x}, func(dst []float32, ins [][]float32) {
		in := ins[0]
		for p := 0; p < planes; p++ {
			src := in[p*ih*iw : (p+1)*ih*iw]
			o := dst[p*oh*ow : (p+1)*oh*ow]
			for y, yt := range ty {
				r0, r1 := src[yt.i0*iw:], src[yt.i1*iw:]
				for xx, xt := range tx {
					o[y*ow+xx] = xt.w0*yt.w0*r0[xt.i0] + xt.w1*yt.w0*r0[xt.i1] +
						xt.w0*yt.w1*r1[xt.i0] + xt.w1*yt.w1*r1[xt.i1]
				}
			}
		}
	}), devResize{planes, ih, iw, ty, tx})
}

// linearTap is one output row's (or column's) linear interpolation: input
// indices i0 and i1 with weights w0 and w1.
type linearTap struct {
	i0, i1 int
	w0, w1 float32
}
