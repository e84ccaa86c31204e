package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestGemvMatchesTiles checks, for every assembly kernel set, that the
// narrow column panels that block computes column by column (gemvFMA)
// are bit for bit what the set's micro-kernels compute for them: random
// depths (several depth blocks), row counts (partial panels, more than
// one gemvFMA call), every epilogue, exact zeros of both signs.
func TestGemvMatchesTiles(t *testing.T) {
	sets := asmSets()
	if len(sets) == 0 {
		t.Skipf("no assembly kernel set here (%s)", KernelSet())
	}
	r := rand.New(rand.NewPCG(41, 42))
	prev := activeSet()
	defer cur.Store(prev)
	for _, ks := range sets {
		cur.Store(ks)
		for it := 0; it < 150; it++ {
			m, n, k := 1+r.IntN(70), 1+r.IntN(gemvCols), 1+r.IntN(600)
			if it%10 == 0 {
				m = 513 + r.IntN(600) // more rows than one gemvFMA call takes
			}
			act := testActs[r.IntN(len(testActs))]
			acc, hasBias := r.IntN(2) == 0, r.IntN(2) == 0
			name := fmt.Sprintf("%s: m=%d n=%d k=%d act=%+v acc=%v bias=%v", ks.name, m, n, k, act, acc, hasBias)
			a, b := randSlice(r, m*k), randSlice(r, k*n)
			for _, x := range []([]float32){a, b} {
				for i := range x {
					switch r.IntN(10) {
					case 0:
						x[i] = 0
					case 1:
						x[i] = float32(math.Copysign(0, -1))
					}
				}
			}
			kc := depthBlock(m)
			ap := make([]float32, packedASize(m, k))
			packA(ap, a, k, false, m, k, kc, 1)
			var bias []float32
			if hasBias {
				bias = randSlice(r, roundUp(m, mr))
			}
			c0 := randSlice(r, m*n)
			got, want := append([]float32(nil), c0...), append([]float32(nil), c0...)
			mat := matrixB{b: b, ldb: n}
			g := gemmOp{ks: ks, m: m, n: n, k: k, kc: kc, ap: ap, b: &mat, c: got, ldc: n, acc: acc, bias: bias, act: act}
			var buf packBuf
			g.block(0, m, 0, n, buf.b[:])

			// The same GEMM through the micro-kernels, as block computes
			// wider panels.
			mPad := roundUp(m, mr)
			actFlags, lo, hi, alpha := act.epilogue()
			ep := epilogue{lo: lo, hi: hi, alpha: alpha}
			for pc := 0; pc < k; pc += kc {
				kcb := min(kc, k-pc)
				ep.flags = 0
				if pc > 0 || acc {
					ep.flags |= epAccumulate
				}
				if pc+kcb == k {
					ep.flags |= actFlags
					if bias != nil {
						ep.flags |= epBias
					}
				}
				aBlock := ap[pc*mPad : pc*mPad+mPad*kcb]
				bp, boff, maxOff := mat.panel(buf.b[:], pc, kcb, 0, n, ks.nr)
				for i := 0; i < m; i += ks.mr {
					if bias != nil {
						ep.bias = &bias[i]
					}
					ks.gemm(kcb, aBlock[i*kcb:], mr*kcb, bp, boff, maxOff, want[i*n:], n, &ep, min(ks.mr, m-i), n, 4*ks.nr)
				}
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: C[%d][%d] = %v by columns, %v by tiles", name, i/n, i%n, got[i], want[i])
				}
			}
		}
	}
}
