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

// winogradPays reports whether NewConv prefers Winograd to the shifted
// GEMM for a shape it applies to: whenever the layer has at least 8 input
// channels. Winograd does 2.25× fewer multiplications, which outweighs its
// transforms on every 3×3 stride-1 layer of the shipped models (see
// BenchmarkConv), including the small-image, large-weight ones whose
// GEMMs compute the 49 tiles of a 13×13 image as 64 columns; with fewer
// input channels its GEMMs are too shallow to pay. The choice depends on the
// shape only, never on the kernel set or the machine, so that results are
// the same everywhere.
func winogradPays(s ConvShape) bool { return s.InC >= 8 }

// winograd is the prepared state of a Winograd convolution.
//
// Forward processes the tiles in blocks of rows of tiles, sized so that a
// block's transformed input V (16 × InC × tiles) and GEMM output M (16 ×
// OutC × tiles) stay in the L2 cache: padding of the input rows the block
// reads, input transform, 16 GEMMs M_ξ = U_ξ · V_ξ, output transform,
// before the next block. The workers share the blocks, or on small images
// the output channels (see winoPlan). The padded rows are split into their
// even and odd columns (hw values each), so that the transform of a row of
// tiles reads every column of its 4×4 tiles with contiguous vector loads.
// V and M keep the 16 values of a channel's tile close together
// (V[ch][ξ][t], M[o][ξ][t]): the transforms read or write all 16 at once,
// the GEMMs use row strides.
type winograd struct {
	tilesH, tilesW, tiles int                          // 2×2 output tiles
	hw                    int                          // padded input rows: hw even then hw odd columns
	plans                 [maxPlanWorkers + 1]winoPlan // for 1..maxPlanWorkers workers
	stride                int                          // row stride of V and M in a block (tiles, with slack)
	pitch                 int                          // channel stride of V and M: 16 rows, then a cache line
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
	wg.hw = wg.tilesW + 1
	for w := 1; w <= maxPlanWorkers; w++ {
		wg.plans[w] = wg.plan(s.InC, s.OutC, c.ks.mr, c.ks.nr, w)
		// Slack: the transforms write and read up to a vector past a row
		// of tiles, and the GEMM reads partial panels in place up to nr
		// columns.
		wg.stride = max(wg.stride, roundUp(wg.plans[w].rows*wg.tilesW, 16)+32)
	}
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
	// A channel's 16 rows of V and M, then one cache line more: V and M
	// channels an odd number of lines apart. A GEMM reads a row of V per
	// channel in its depth loop (and writes a row of M per output
	// channel): 16·stride values apart, a multiple of 1 KiB (of 4 KiB on
	// 16×16 images), those rows would fall in a few of the L1 cache's 64
	// sets and evict each other; the extra line spreads them over all sets.
	wg.pitch = 16*wg.stride + 16
	wg.offs = make([]int, ic)
	for p := range wg.offs {
		wg.offs[p] = p * wg.pitch
	}
	c.wino = wg
}
