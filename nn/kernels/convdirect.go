package kernels

// direct computes one image with plain loops (used when each group has
// fewer than mr output channels, e.g. depthwise convolutions), adding res
// (nil, or dst's shape; may be dst) before the activation.
func (c *Conv) direct(dst, src, res []float32) {
	s := c.s
	oh, ow := s.OutH(), s.OutW()
	icg := s.InC / s.Groups
	for o := 0; o < s.OutC; o++ {
		g := o / c.m
		plane := dst[o*oh*ow : (o+1)*oh*ow]
		var b0 float32
		if c.rawBias != nil {
			b0 = c.rawBias[o]
		}
		if res != nil {
			r := res[o*oh*ow : (o+1)*oh*ow]
			for i := range plane {
				plane[i] = b0 + r[i]
			}
		} else {
			for i := range plane {
				plane[i] = b0
			}
		}
		for ci := 0; ci < icg; ci++ {
			in := src[(g*icg+ci)*s.InH*s.InW : (g*icg+ci+1)*s.InH*s.InW]
			wk := c.weight[(o*icg+ci)*s.KH*s.KW : (o*icg+ci+1)*s.KH*s.KW]
			for ky := 0; ky < s.KH; ky++ {
				for kx := 0; kx < s.KW; kx++ {
					wv := wk[ky*s.KW+kx]
					// Output columns whose input column is in range.
					x0 := max(0, ceilDiv(s.PadLeft-kx*s.DilW, s.StrideW))
					x1 := min(ow, ceilDiv(s.InW+s.PadLeft-kx*s.DilW, s.StrideW))
					for y := 0; y < oh; y++ {
						iy := y*s.StrideH - s.PadTop + ky*s.DilH
						if iy < 0 || iy >= s.InH || x0 >= x1 {
							continue
						}
						row := in[iy*s.InW : (iy+1)*s.InW]
						orow := plane[y*ow : (y+1)*ow]
						ix := x0*s.StrideW - s.PadLeft + kx*s.DilW
						for x := x0; x < x1; x++ {
							orow[x] += wv * row[ix]
							ix += s.StrideW
						}
					}
				}
			}
		}
		c.act.Apply(plane)
	}
}

// ceilDiv returns ⌈a/b⌉ for b > 0.
func ceilDiv(a, b int) int {
	if a <= 0 {
		return -((-a) / b)
	}
	return (a + b - 1) / b
}

// reference runs the naive implementation (refkernels builds), adding res
// (nil, or dst's shape; may be dst) before the activation.
func (c *Conv) reference(dst, src, res []float32, n int) {
	if res == nil {
		naiveConv(c.s, c.weight, c.rawBias, c.act, dst, src, n)
		return
	}
	osz := c.s.OutC * c.s.OutH() * c.s.OutW()
	r := res[:n*osz]
	if &r[0] == &dst[0] {
		r = append([]float32(nil), r...)
	}
	naiveConv(c.s, c.weight, c.rawBias, Activation{}, dst, src, n)
	addAct(dst[:n*osz], dst, r, c.act)
}
