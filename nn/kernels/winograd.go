package kernels

// Winograd F(2×2, 3×3) convolution (Lavin & Gray, 2016) for 3×3 stride-1
// undilated layers with many channels: each 2×2 output tile comes from a
// 4×4 input tile through 16 GEMMs (one per point of the transformed tile)
// of depth InC instead of one of depth 9·InC, 2.25× fewer multiplications.
// Its transforms use only additions and halvings, so its rounding error is
// of the order of the direct method's.
//
//	V = Bᵀ d B,  U = G g Gᵀ,  Y = Aᵀ (U ⊙ V) A
//	Bᵀ = [1 0 −1 0; 0 1 1 0; 0 −1 1 0; 0 1 0 −1]
//	G  = [1 0 0; ½ ½ ½; ½ −½ ½; 0 0 1]
//	Aᵀ = [1 1 1 0; 0 1 −1 −1]

// winogradMinInC is the number of input channels from which NewConv
// prefers Winograd to the shifted GEMM: measured on yolov3-tiny's layers
// (BenchmarkConv), Winograd is 25–60% faster from 256 channels on (its
// transforms are scalar Go) and slower below 128.
const winogradMinInC = 256

// winograd is the prepared state of a Winograd convolution.
type winograd struct {
	tilesH, tilesW, tiles int // 2×2 output tiles
	ph, pw                int // padded input plane covering every tile
	offs                  []int
	bias                  []float32 // OutC values or nil
}

// winogradApplies reports whether the Winograd strategy can run s.
func winogradApplies(s ConvShape) bool {
	return s.KH == 3 && s.KW == 3 && s.StrideH == 1 && s.StrideW == 1 &&
		s.DilH == 1 && s.DilW == 1 && s.Groups == 1
}

// prepareWinograd transforms and packs the weights: c.ap holds 16 packed
// A operands U_ξ (OutC × InC), ξ = 4i+j a point of the 4×4 tile.
func (c *Conv) prepareWinograd(weight, bias []float32) {
	s := c.s
	wg := &winograd{tilesH: (s.OutH() + 1) / 2, tilesW: (s.OutW() + 1) / 2}
	wg.tiles = wg.tilesH * wg.tilesW
	wg.ph, wg.pw = 2*wg.tilesH+2, 2*wg.tilesW+2
	if bias != nil {
		wg.bias = append([]float32(nil), bias...)
	}
	m, ic := s.OutC, s.InC
	u := make([]float32, 16*m*ic) // [ξ][o][c]
	for o := 0; o < m; o++ {
		for ch := 0; ch < ic; ch++ {
			g := weight[(o*ic+ch)*9 : (o*ic+ch+1)*9]
			// t = G g (4×3), then U = t Gᵀ (4×4).
			var t [4][3]float32
			for j := 0; j < 3; j++ {
				g0, g1, g2 := g[j], g[3+j], g[6+j]
				t[0][j], t[1][j], t[2][j], t[3][j] = g0, (g0+g1+g2)*0.5, (g0-g1+g2)*0.5, g2
			}
			for i := 0; i < 4; i++ {
				r0, r1, r2 := t[i][0], t[i][1], t[i][2]
				row := [4]float32{r0, (r0 + r1 + r2) * 0.5, (r0 - r1 + r2) * 0.5, r2}
				for j, v := range row {
					u[((4*i+j)*m+o)*ic+ch] = v
				}
			}
		}
	}
	c.m, c.k, c.n = m, ic, wg.tiles
	c.kc = depthBlock(m)
	per := packedASize(m, ic)
	c.ap = make([]float32, 16*per)
	for xi := 0; xi < 16; xi++ {
		packA(c.ap[xi*per:], u[xi*m*ic:], ic, false, m, ic, c.kc, 1)
	}
	wg.offs = make([]int, ic)
	for p := range wg.offs {
		wg.offs[p] = p * wg.tiles
	}
	c.wino = wg
}

// winogradScratch is the number of scratch values of one Winograd call:
// the padded input, V (16 × InC × tiles) and M (16 × OutC × tiles).
func (c *Conv) winogradScratch() int {
	wg := c.wino
	return c.s.InC*wg.ph*wg.pw + 16*(c.s.InC+c.s.OutC)*wg.tiles
}

// forwardWinograd computes one image, adding res (nil, or dst's shape; may
// be dst) before the activation.
func (c *Conv) forwardWinograd(call *convCall, dst, src, res []float32) {
	s, wg := c.s, c.wino
	if call.scratch == nil {
		call.scratch = make([]float32, c.winogradScratch())
	}
	plane := wg.ph * wg.pw
	pad := call.scratch[:s.InC*plane]
	v := call.scratch[len(pad) : len(pad)+16*s.InC*wg.tiles]
	mm := call.scratch[len(pad)+len(v):]
	clear(pad)
	for ch := 0; ch < s.InC; ch++ {
		for y := 0; y < s.InH; y++ {
			o := (ch*wg.ph+y+s.PadTop)*wg.pw + s.PadLeft
			copy(pad[o:o+s.InW], src[(ch*s.InH+y)*s.InW:(ch*s.InH+y+1)*s.InW])
		}
	}
	// Input transform: V[ξ][c][t] = (Bᵀ d B)[ξ].
	w := workers(16 * s.InC * wg.tiles * 8)
	if w <= 1 {
		c.winogradInput(v, pad, 0, s.InC)
	} else {
		ParallelFor(s.InC, w, func(c0, c1 int) { c.winogradInput(v, pad, c0, c1) })
	}
	// 16 GEMMs: M_ξ = U_ξ · V_ξ.
	per := packedASize(c.m, c.k)
	for xi := 0; xi < 16; xi++ {
		call.mat = matrixB{b: v[xi*s.InC*wg.tiles : (xi+1)*s.InC*wg.tiles], ldb: wg.tiles, offs: wg.offs}
		call.g = gemmOp{ks: c.ks, m: c.m, n: wg.tiles, k: c.k, kc: c.kc, ap: c.ap[xi*per : (xi+1)*per],
			b: &call.mat, c: mm[xi*c.m*wg.tiles : (xi+1)*c.m*wg.tiles], ldc: wg.tiles}
		call.g.run()
	}
	// Output transform, bias and activation: Y = Aᵀ m A.
	if w <= 1 {
		c.winogradOutput(dst, mm, res, 0, s.OutC)
	} else {
		ParallelFor(s.OutC, w, func(o0, o1 int) { c.winogradOutput(dst, mm, res, o0, o1) })
	}
	call.g, call.mat = gemmOp{}, matrixB{}
}

// apply1 applies the activation to one value.
func (a Activation) apply1(x float32) float32 {
	switch a.Kind {
	case ActRelu:
		if x < 0 {
			return 0
		}
	case ActLeakyRelu:
		if x < 0 {
			return a.Alpha * x
		}
	case ActClip:
		if x < a.Min {
			x = a.Min
		}
		if x > a.Max {
			return a.Max
		}
	}
	return x
}

// winogradInput transforms input channels [c0, c1) of the padded image
// into v (V[ξ][c][t]).
func (c *Conv) winogradInput(v, pad []float32, c0, c1 int) {
	s, wg := c.s, c.wino
	plane := wg.ph * wg.pw
	for ch := c0; ch < c1; ch++ {
		base := pad[ch*plane : (ch+1)*plane]
		for ty := 0; ty < wg.tilesH; ty++ {
			for tx := 0; tx < wg.tilesW; tx++ {
				o := 2*ty*wg.pw + 2*tx
				r0 := base[o : o+4]
				r1 := base[o+wg.pw : o+wg.pw+4]
				r2 := base[o+2*wg.pw : o+2*wg.pw+4]
				r3 := base[o+3*wg.pw : o+3*wg.pw+4]
				// Columns: t = Bᵀ d.
				var t [4][4]float32
				for j := 0; j < 4; j++ {
					d0, d1, d2, d3 := r0[j], r1[j], r2[j], r3[j]
					t[0][j], t[1][j], t[2][j], t[3][j] = d0-d2, d1+d2, d2-d1, d1-d3
				}
				idx := ch*wg.tiles + ty*wg.tilesW + tx
				stride := s.InC * wg.tiles
				for i := 0; i < 4; i++ {
					d0, d1, d2, d3 := t[i][0], t[i][1], t[i][2], t[i][3]
					v[(4*i)*stride+idx] = d0 - d2
					v[(4*i+1)*stride+idx] = d1 + d2
					v[(4*i+2)*stride+idx] = d2 - d1
					v[(4*i+3)*stride+idx] = d1 - d3
				}
			}
		}
	}
}

// winogradOutput transforms output channels [o0, o1) of mm (M[ξ][o][t])
// into dst, adding the bias and res (nil, or dst's shape) and applying the
// activation.
func (c *Conv) winogradOutput(dst, mm, res []float32, o0, o1 int) {
	s, wg := c.s, c.wino
	oh, ow := s.OutH(), s.OutW()
	stride := c.m * wg.tiles
	for o := o0; o < o1; o++ {
		var b0 float32
		if wg.bias != nil {
			b0 = wg.bias[o]
		}
		out := dst[o*oh*ow : (o+1)*oh*ow]
		if res != nil {
			c.winogradOutputRes(out, mm, res[o*oh*ow:(o+1)*oh*ow], o, b0)
			continue
		}
		for ty := 0; ty < wg.tilesH; ty++ {
			for tx := 0; tx < wg.tilesW; tx++ {
				idx := o*wg.tiles + ty*wg.tilesW + tx
				var t [2][4]float32
				for j := 0; j < 4; j++ {
					m0, m1, m2, m3 := mm[j*stride+idx], mm[(4+j)*stride+idx], mm[(8+j)*stride+idx], mm[(12+j)*stride+idx]
					t[0][j], t[1][j] = m0+m1+m2, m1-m2-m3
				}
				y, x := 2*ty, 2*tx
				for i := 0; i < 2 && y+i < oh; i++ {
					row := out[(y+i)*ow : (y+i+1)*ow]
					m0, m1, m2, m3 := t[i][0], t[i][1], t[i][2], t[i][3]
					row[x] = c.act.apply1(m0 + m1 + m2 + b0)
					if x+1 < ow {
						row[x+1] = c.act.apply1(m1 - m2 - m3 + b0)
					}
				}
			}
		}
	}
}

// winogradOutputRes is winogradOutput's loop for output channel o with a
// residual r (may be out).
func (c *Conv) winogradOutputRes(out, mm, r []float32, o int, b0 float32) {
	s, wg := c.s, c.wino
	oh, ow := s.OutH(), s.OutW()
	stride := c.m * wg.tiles
	for ty := 0; ty < wg.tilesH; ty++ {
		for tx := 0; tx < wg.tilesW; tx++ {
			idx := o*wg.tiles + ty*wg.tilesW + tx
			var t [2][4]float32
			for j := 0; j < 4; j++ {
				m0, m1, m2, m3 := mm[j*stride+idx], mm[(4+j)*stride+idx], mm[(8+j)*stride+idx], mm[(12+j)*stride+idx]
				t[0][j], t[1][j] = m0+m1+m2, m1-m2-m3
			}
			y, x := 2*ty, 2*tx
			for i := 0; i < 2 && y+i < oh; i++ {
				row := out[(y+i)*ow : (y+i+1)*ow]
				rr := r[(y+i)*ow : (y+i+1)*ow]
				m0, m1, m2, m3 := t[i][0], t[i][1], t[i][2], t[i][3]
				row[x] = c.act.apply1(m0 + m1 + m2 + b0 + rr[x])
				if x+1 < ow {
					row[x+1] = c.act.apply1(m1 - m2 - m3 + b0 + rr[x+1])
				}
			}
		}
	}
}
