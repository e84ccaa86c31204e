package kernels

// winoPlan is how a Winograd convolution splits its work: blocks of tile
// rows (as even as can be: block b is rows [b·tilesH/blocks,
// (b+1)·tilesH/blocks), at most rows each), and groups of output channels
// (each computing every block for its channels, the padding and input
// transform repeated per group).
type winoPlan struct{ blocks, rows, groups int }

// newWinoPlan returns the plan of blocks blocks of tilesH tile rows for
// groups groups of output channels.
func newWinoPlan(tilesH, blocks, groups int) winoPlan {
	return winoPlan{blocks: blocks, rows: (tilesH + blocks - 1) / blocks, groups: groups}
}

// span returns the tile rows [ty0, ty1) of block b of a plan for tilesH
// tile rows.
func (p winoPlan) span(b, tilesH int) (ty0, ty1 int) {
	return b * tilesH / p.blocks, (b + 1) * tilesH / p.blocks
}

// winoBlockBudget is the number of float32 values of V and M that one
// block aims to fit in (512 KiB: half of a typical per-core L2).
const winoBlockBudget = 128 << 10

// maxPlanWorkers is the largest number of workers the block sizes are
// planned for; more use the plan for that many.
const maxPlanWorkers = 4

// plan returns the split of the work for w workers: blocks of tile rows
// (see blockPlan) unless they would leave each worker fewer than 32 tiles
// (two vectors of GEMM columns: the GEMMs of small images would mostly
// compute padding), then w groups of output channels (a multiple of the
// kernel set's mr rows each) when there are enough.
func (wg *winograd) plan(inC, outC, mr, nr, w int) winoPlan {
	if w > 1 && wg.tiles < 32*w && outC >= 2*w*mr {
		per := roundUp((outC+w-1)/w, mr)
		p := wg.blockPlan(inC, outC, nr, 1)
		p.groups = (outC + per - 1) / per
		return p
	}
	return wg.blockPlan(inC, outC, nr, w)
}

// groupChannels returns the output channels [o0, o1) of group g of p.
func (c *Conv) groupChannels(p winoPlan, g int) (o0, o1 int) {
	per := roundUp((c.s.OutC+p.groups-1)/p.groups, c.ks.mr)
	return g * per, min(c.s.OutC, (g+1)*per)
}

// blockPlan returns the blocks of tile rows when w workers share them (one
// group of channels): blocks whose V and M (16·ch values per tile, ch the
// input plus output channels) fit 1.5 times winoBlockBudget (or hold at
// least two GEMM panels of nr tiles); among those counts of blocks the one
// whose busiest worker computes the fewest GEMM columns (the micro-kernels
// compute whole vectors of 16 columns for avx512, whole 24-column tiles
// otherwise), with a fixed cost of 8 columns per block (its padding rows,
// partial panels), the fewest blocks on a tie. The tile rows are spread
// evenly over the blocks: 28 rows in 6 blocks for 2 workers are 5, 5, 4
// and 5, 5, 4, not 5, 5, 5 and 5, 5, 3. The blocks never change the
// results, only the time.
func (wg *winograd) blockPlan(inC, outC, nr, w int) winoPlan {
	ch := inC + outC
	fit := max(3*winoBlockBudget/2/(16*ch), 2*nr)
	g := nr
	if nr == nrMax {
		g = 16
	}
	maxRows := min(wg.tilesH, max(1, fit/wg.tilesW))
	best, bestCost := winoPlan{}, -1
	for blocks := wg.tilesH; blocks >= (wg.tilesH+maxRows-1)/maxRows; blocks-- {
		p := newWinoPlan(wg.tilesH, blocks, 1)
		// parallelFor's contiguous chunks of blocks.
		cost, chunk := 0, (blocks+w-1)/w
		for i := 0; i < blocks; i += chunk {
			sum := 0
			for b := i; b < min(i+chunk, blocks); b++ {
				ty0, ty1 := p.span(b, wg.tilesH)
				sum += roundUp((ty1-ty0)*wg.tilesW, g) + 8
			}
			cost = max(cost, sum)
		}
		if bestCost < 0 || cost <= bestCost {
			best, bestCost = p, cost
		}
	}
	return best
}

// blockLen is the number of scratch values of one block: V and M.
func (c *Conv) winoBlockLen() int { return (c.s.InC + c.s.OutC) * c.wino.pitch }

// padRows is the number of padded input rows a block of rows tile rows
// reads.
func padRows(rows int) int { return 2*rows + 2 }

// winoPadLen is the number of values of one block's padded input rows.
func (c *Conv) winoPadLen(rows int) int { return c.s.InC * padRows(rows) * 2 * c.wino.hw }
