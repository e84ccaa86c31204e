package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// forEachSet runs f as a subtest once per kernel set, with that set in use
// (Gemm, MaxPool and the Convs f prepares use it). A set this CPU or build
// cannot run is reported as a skipped subtest naming what it needs, never
// left out silently.
func forEachSet(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	prev := activeSet()
	defer cur.Store(prev)
	for _, s := range sets {
		t.Run(s.name, func(t *testing.T) {
			if refKernels {
				t.Skip("refkernels build: the naive implementation replaces every kernel set")
			}
			if !s.ok {
				t.Skipf("kernel set %s not available here: needs %s", s.name, s.needs)
			}
			cur.Store(s)
			defer cur.Store(prev)
			f(t)
		})
	}
}

// asmSets returns the available assembly kernel sets (bit-identical to
// each other by design).
func asmSets() []*kernelSet {
	var out []*kernelSet
	for _, s := range sets {
		if s.ok && s != &genericSet {
			out = append(out, s)
		}
	}
	return out
}

// TestKernelSetsListed checks the set registry: the portable set is always
// there and available, the one in use is available, and the AVX2 and
// AVX-512 sets are listed with their availability (never available in a
// build without assembly, saying why).
func TestKernelSetsListed(t *testing.T) {
	infos := KernelSets()
	byName := map[string]KernelSetInfo{}
	for _, in := range infos {
		byName[in.Name] = in
		t.Logf("kernel set %-8s available=%v %s", in.Name, in.Available, in.Reason)
	}
	if g, ok := byName["generic"]; !ok || !g.Available {
		t.Errorf("generic set missing or unavailable: %+v", infos)
	}
	for _, name := range []string{"avx512", "avx2"} {
		in, ok := byName[name]
		if !ok {
			t.Errorf("%s not listed", name)
		}
		if !hasAsmSets && (in.Available || !strings.Contains(in.Reason, "noasm")) {
			t.Errorf("%s in a build without assembly: %+v", name, in)
		}
	}
	if !refKernels {
		if in := byName[KernelSet()]; !in.Available {
			t.Errorf("set in use %q is not available", KernelSet())
		}
	}
	if env := os.Getenv(KernelSetEnv); env == "" && !refKernels && infos[0].Available && KernelSet() != infos[0].Name {
		// Without AMT_KERNELS the best available set is chosen.
		t.Errorf("set in use %s, want the best available %s", KernelSet(), infos[0].Name)
	}
}

// TestUse checks choosing a set by name and the errors for unknown and
// unavailable sets.
func TestUse(t *testing.T) {
	prev := activeSet()
	defer cur.Store(prev)
	if err := Use("generic"); err != nil || activeSet() != &genericSet {
		t.Fatalf("Use(generic) = %v, set %s", err, activeSet().name)
	}
	if err := Use("avx9"); err == nil || !strings.Contains(err.Error(), `unknown kernel set "avx9"; did you mean "avx2"? (want one of`) {
		t.Errorf("Use(avx9) = %v", err)
	}
	if err := Use("neon"); err == nil || !strings.Contains(err.Error(), `unknown kernel set "neon" (want one of`) {
		t.Errorf("Use(neon) = %v", err)
	}
	for _, s := range sets {
		err := Use(s.name)
		switch {
		case s.ok && err != nil:
			t.Errorf("Use(%s) = %v", s.name, err)
		case !s.ok && (err == nil || !strings.Contains(err.Error(), "needs "+s.needs)):
			t.Errorf("Use(%s) on a CPU without it = %v", s.name, err)
		}
	}
}

// TestKernelEpilogue compares every kernel set's micro-kernel with the
// portable one for every epilogue combination, depth and tile edge (rows
// and columns short of the tile), checking that nothing outside the tile
// is written; the assembly sets must agree with each other bit for bit.
func TestKernelEpilogue(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	type result struct {
		set string
		c   []float32
	}
	for flags := uint64(0); flags < 32; flags++ {
		for _, k := range []int{1, 3, 4, 5, 17, 256} {
			for _, shape := range [][2]int{{8, 48}, {4, 24}, {3, 24}, {5, 17}, {7, 33}, {1, 1}, {6, 16}, {4, 47}, {2, 32}} {
				rows, cols := shape[0], shape[1]
				const ldc = nrMax + 5
				a, b := randSlice(r, 2*k*mr), randSlice(r, k*nrMax)
				bias := randSlice(r, 2*mr)
				c0 := randSlice(r, 2*mr*ldc)
				ep := epilogue{flags: flags, bias: &bias[0], lo: -0.3, hi: 0.4, alpha: 0.2}
				// The portable kernel, panel by panel on full tiles.
				want := slices.Clone(c0)
				for q := 0; q < 2; q++ {
					epq := ep
					epq.bias = &bias[4*q]
					for j0 := 0; j0 < nrMax; j0 += nr {
						var offs [256]int
						for p := range offs[:k] {
							offs[p] = p*nrMax + j0
						}
						kernelGo(k, a[q*4*k:], b, offs[:k], want[4*q*ldc+j0:], ldc, &epq)
					}
				}
				var asm []result
				for _, s := range sets {
					if !s.ok || rows > s.mr || cols > s.nr {
						continue
					}
					c := slices.Clone(c0)
					s.gemm(k, a, 4*k, b, packedOffsets(nrMax)[:k], (k-1)*nrMax, c, ldc, &ep, rows, cols, 4*s.nr)
					name := fmt.Sprintf("%s flags %05b k %d tile %d×%d", s.name, flags, k, rows, cols)
					for i := range c {
						in := i/ldc < rows && i%ldc < cols
						if !in {
							if math.Float32bits(c[i]) != math.Float32bits(c0[i]) {
								t.Fatalf("%s: wrote outside the tile at row %d column %d", name, i/ldc, i%ldc)
							}
							continue
						}
						if d := math.Abs(float64(c[i] - want[i])); d > 1e-5*float64(k) {
							t.Fatalf("%s: element (%d, %d) = %v, portable kernel %v", name, i/ldc, i%ldc, c[i], want[i])
						}
					}
					if s != &genericSet {
						asm = append(asm, result{s.name, c})
					}
				}
				for _, x := range asm[min(1, len(asm)):] {
					if !bitEqual(x.c, asm[0].c) {
						t.Fatalf("flags %05b k %d tile %d×%d: kernel sets %s and %s differ", flags, k, rows, cols, x.set, asm[0].set)
					}
				}
			}
		}
	}
}

func bitEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// TestKernelSetsBitIdentical runs every convolution strategy on the real
// layer shapes of the shipped models (and random shapes) and Gemm with each
// assembly kernel set: the results must be identical bit for bit, so that
// the set a CPU picks never changes a verdict.
func TestKernelSetsBitIdentical(t *testing.T) {
	as := asmSets()
	if len(as) < 2 {
		for _, s := range sets {
			if !s.ok {
				t.Logf("kernel set %s not available here: needs %s", s.name, s.needs)
			}
		}
		t.Skipf("%d assembly kernel set(s) available here: nothing to compare", len(as))
	}
	prev := activeSet()
	defer cur.Store(prev)
	run := func(c convCase, strat strategy, seed uint64) [][]float32 {
		var outs [][]float32
		for _, s := range as {
			cur.Store(s)
			r := rand.New(rand.NewPCG(seed, 1))
			conv, _, _, src := newRandConv(t, r, c, strat)
			osz := c.s.OutC * c.s.OutH() * c.s.OutW()
			dst := make([]float32, c.n*osz)
			res := randSlice(r, c.n*osz)
			conv.Forward(dst, src, c.n)
			conv.ForwardAdd(res, src, res, c.n)
			outs = append(outs, append(dst, res...))
		}
		return outs
	}
	check := func(name string, outs [][]float32) {
		t.Helper()
		for i := 1; i < len(outs); i++ {
			if !bitEqual(outs[0], outs[i]) {
				t.Errorf("%s: kernel sets %s and %s differ", name, as[0].name, as[i].name)
			}
		}
	}
	for i, ms := range modelShapes {
		if testing.Short() && ms.s.flops() > 2e8 {
			continue
		}
		c := convCase{s: ms.s, bias: true, act: testActs[i%len(testActs)], n: 1}
		check(ms.name, run(c, stratAuto, uint64(i)))
	}
	r := rand.New(rand.NewPCG(31, 32))
	for it := 0; it < 60; it++ {
		c := convCase{s: randConvShape(r), bias: r.IntN(2) == 0, act: testActs[r.IntN(len(testActs))], n: 1 + r.IntN(2)}
		for _, st := range []strategy{stratAuto, stratIm2col, stratShifted} {
			check(fmt.Sprintf("%+v strategy %d", c.s, st), run(c, st, uint64(100+it)))
		}
		if winogradApplies(c.s) {
			check(fmt.Sprintf("%+v winograd", c.s), run(c, stratWinograd, uint64(100+it)))
		}
	}
	for _, g := range []gemmCase{{m: 65, n: 800, k: 300, alpha: 1}, {m: 67, n: 31, k: 600, alpha: 1, beta: 1}, {transA: true, transB: true, m: 130, n: 97, k: 257, alpha: 0.5, beta: -2}} {
		var outs [][]float32
		for _, s := range as {
			cur.Store(s)
			r := rand.New(rand.NewPCG(7, 7))
			a, b, c := randSlice(r, g.m*g.k), randSlice(r, g.k*g.n), randSlice(r, g.m*g.n)
			lda, ldb := g.k, g.n
			if g.transA {
				lda = g.m
			}
			if g.transB {
				ldb = g.k
			}
			Gemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, a, lda, b, ldb, g.beta, c, g.n)
			outs = append(outs, c)
		}
		check(g.String(), outs)
	}
}

// TestGemmTilesAVX2 runs the AVX2 set's tile kernels at every panel width
// (24, and narrower right-hand panels: whole vectors of 8 and masked ones)
// over one to three tiles, for every epilogue: each tile must equal, bit
// for bit, the 4×24 kernel's tiles cut to width (computed separately,
// into a copy of C), and nothing outside the tiles may be written. (The
// 4×24 kernel itself is checked against the portable kernel and, bit for
// bit, the avx512 set by TestKernelEpilogue.)
func TestGemmTilesAVX2(t *testing.T) {
	if !avx2Set.ok {
		t.Skipf("kernel set avx2 not available here: needs %s", avx2Set.needs)
	}
	r := rand.New(rand.NewPCG(21, 22))
	for flags := uint64(0); flags < 32; flags++ {
		for _, k := range []int{1, 4, 7, 64} {
			for tiles := 1; tiles <= 3; tiles++ {
				for w := range nr {
					cols := w + 1 // 1…nr
					rows, ldc := 4*tiles, nr+3
					a, b := randSlice(r, rows*k), randSlice(r, k*nr)
					bias := randSlice(r, rows)
					c0 := randSlice(r, rows*ldc)
					ep := epilogue{flags: flags, bias: &bias[0], lo: -0.3, hi: 0.4, alpha: 0.2}
					offs := packedOffsets(nr)[:k]
					full := slices.Clone(c0)
					gemmTilesAVX2(k, a, b, offs, (k-1)*nr, full, ldc, &ep, nr, tiles, 4*nr)
					want := slices.Clone(c0)
					for i := 0; i < rows; i++ {
						copy(want[i*ldc:i*ldc+cols], full[i*ldc:i*ldc+cols])
					}
					got := slices.Clone(c0)
					gemmTilesAVX2(k, a, b, offs, (k-1)*nr, got, ldc, &ep, cols, tiles, 4*nr)
					if !bitEqual(got, want) {
						for i := range got {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("flags %05b k %d %d tiles of width %d: element (%d, %d) = %v, want %v", flags, k, tiles, cols, i/ldc, i%ldc, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}
