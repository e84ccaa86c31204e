package kernels

// addAct sets dst[i] = act(x[i] + r[i]); dst may be x or r.
func addAct(dst, x, r []float32, act Activation) {
	x, r = x[:len(dst)], r[:len(dst)]
	switch act.Kind {
	case ActNone:
		for i := range dst {
			dst[i] = x[i] + r[i]
		}
	case ActRelu:
		for i := range dst {
			dst[i] = max(x[i]+r[i], 0)
		}
	default:
		for i := range dst {
			dst[i] = act.apply1(x[i] + r[i])
		}
	}
}

// forward is Forward (res nil) and ForwardAdd.
func (c *Conv) forward(dst, src, res []float32, n int) {
	s := c.s
	isz, osz := s.InC*s.InH*s.InW, s.OutC*s.OutH()*s.OutW()
	if n == 0 {
		return
	}
	flops.Add(uint64(n) * c.Flops())
	enter()
	defer leave()
	// resAt returns image b's residual, nil without one.
	resAt := func(b int) []float32 {
		if res == nil {
			return nil
		}
		return res[b*osz : (b+1)*osz]
	}
	switch c.strategy {
	case stratReference:
		c.reference(dst, src, res, n)
		return
	case stratDirect:
		for b := 0; b < n; b++ {
			c.direct(dst[b*osz:(b+1)*osz], src[b*isz:(b+1)*isz], resAt(b))
		}
		return
	}
	call := c.calls.get()
	if c.strategy == stratWinograd {
		for b := 0; b < n; b++ {
			c.forwardWinograd(call, dst[b*osz:(b+1)*osz], src[b*isz:(b+1)*isz], resAt(b), nil)
		}
		c.calls.put(call)
		return
	}
	icg := s.InC / s.Groups
	per := packedASize(c.m, c.k)
	mPad := roundUp(c.m, mr)
	oh, ow := s.OutH(), s.OutW()
	// The shifted strategy's GEMM computes phase-plane rows wider than the
	// output's (narrow): in row mode straight into the output, otherwise
	// into cbuf, from which each worker copies its rows (compact).
	narrow := c.strategy == stratShifted && c.wph != ow
	compact := narrow && !c.rowMode
	var pad, cbuf []float32
	var bands *shiftBands
	if c.strategy == stratShifted {
		bands = c.bandPlan(2 * c.m * c.n * c.k)
	}
	if c.strategy == stratShifted && bands == nil {
		if call.scratch == nil {
			n := c.padLen
			if compact {
				n += c.m * c.n
			}
			call.scratch = make([]float32, n)
		}
		// padInput writes the same positions at every call: the borders
		// of pad stay zero from its allocation.
		pad, cbuf = call.scratch[:c.padLen], call.scratch[c.padLen:]
	}
	for b := 0; b < n; b++ {
		for g := 0; g < s.Groups; g++ {
			in := src[b*isz+g*icg*s.InH*s.InW : b*isz+(g+1)*icg*s.InH*s.InW]
			out := dst[b*osz+g*c.m*oh*ow : b*osz+(g+1)*c.m*oh*ow]
			var r []float32 // this group's residual
			if res != nil {
				r = res[b*osz+g*c.m*oh*ow : b*osz+(g+1)*c.m*oh*ow]
			}
			var bias []float32
			if c.bias != nil {
				bias = c.bias[g*mPad : (g+1)*mPad]
			}
			if bands != nil {
				c.forwardBands(call, bands, out, in, r, c.ap[g*per:(g+1)*per], bias)
				continue
			}
			call.g = gemmOp{ks: c.ks, m: c.m, n: c.n, k: c.k, kc: c.kc, ap: c.ap[g*per : (g+1)*per], c: out, ldc: c.n, bias: bias, act: c.act}
			if narrow {
				call.g.rowW, call.g.bRowW = ow, c.wph
				if c.rowMode {
					call.g.n, call.g.ldc = oh*ow, oh*ow
				}
			}
			switch {
			case r == nil:
			case compact:
				c.scatterRes(cbuf, c.n, r, 0, oh)
				call.g.acc = true
			default:
				// Accumulate into C = res.
				if &r[0] != &out[0] {
					copy(out, r)
				}
				call.g.acc = true
			}
			switch c.strategy {
			case stratPointwise:
				call.mat = matrixB{b: in, ldb: c.n, offs: c.offs}
				call.g.b = &call.mat
			case stratShifted:
				c.padImage(pad, in, icg)
				call.sh = shiftB{pad: pad, offs: c.offs, maxOff: c.maxOff}
				call.g.b = &call.sh
				if compact {
					call.g.c, call.g.out, call.g.outLd = cbuf, out, oh*ow
				}
			default:
				call.img = imageB{c: c, in: in}
				call.g.b = &call.img
			}
			call.g.run()
		}
	}
	call.g, call.mat, call.img, call.sh = gemmOp{}, matrixB{}, imageB{}, shiftB{}
	c.calls.put(call)
}

// scatterRes copies output rows [y0, y1) of the residual r (one group's)
// into the padded-width buffer cb of a compacted shifted GEMM (channel o's
// rows from cb[o·ldc:], wph values apart), zeroing the columns dropped
// afterwards, for the GEMM to accumulate into.
func (c *Conv) scatterRes(cb []float32, ldc int, r []float32, y0, y1 int) {
	oh, ow := c.s.OutH(), c.s.OutW()
	for o := 0; o < c.m; o++ {
		for y := y0; y < y1; y++ {
			row := cb[o*ldc+(y-y0)*c.wph : o*ldc+(y-y0+1)*c.wph]
			copy(row, r[(o*oh+y)*ow:(o*oh+y+1)*ow])
			clear(row[ow:])
		}
	}
}

// rowModePays reports whether the shifted strategy computes an image's
// outW-wide output rows in place, row by row (row mode: no panel crosses a
// row, so a row's last panel is partial), rather than every column of the
// phase planes' bRowW-wide rows into a buffer, compacted afterwards. Row
// mode saves the compaction, a pass over the output, and computes no more
// when the partial panels cost no more than the dropped columns: the avx512
// set computes a partial panel as masked 16-column vectors, the others as
// a whole tile. (Both compute every output value the same way.)
func (s *kernelSet) rowModePays(outW, bRowW int) bool {
	v := s.nr
	if s.isa == isaAVX512 {
		v = 16
	}
	return outW >= s.nr && roundUp(outW, v) <= bRowW
}
