package bandit

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/mr"
)

// keep holds the padding allocations of TestLearningIndependentOfAddresses
// so that the allocator cannot reuse their slots.
var keep [][]float32

// The same agent, seed and feedback learn the same bytes wherever the
// allocator puts the agent's buffers. gonum's SSE dot product (behind
// gorgonia's Mul) rounds differently for unaligned operands, and a 5-d
// context (6 inputs with the bias: Go's 24-byte size class) or 5 hidden
// units land 8 bytes off a 16-byte boundary depending on what was
// allocated before; here 0–7 padding objects of those sizes come first.
func TestLearningIndependentOfAddresses(t *testing.T) {
	sc, err := mr.Builtin("basic")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cover", "epsilon-greedy", "softmax", "squarecb", "bootstrap-ts"} {
		t.Run(name, func(t *testing.T) {
			var want []byte
			for shift := 0; shift < 8; shift++ {
				for i := 0; i < shift; i++ {
					keep = append(keep, make([]float32, 6), make([]float32, 3), make([]float32, 5))
				}
				a, err := New(name, sc, Layout{Dim: 5}, Options{"hidden": "5"}, 1)
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				ctx := make([]float32, 5)
				for i := 0; i < 100; i++ {
					for j := range ctx {
						ctx[j] = rng.Float32()
					}
					c, err := a.Choose(ctx, rng)
					if err != nil {
						t.Fatal(err)
					}
					if err := a.Update(ctx, c, rng.IntN(3) == 0); err != nil {
						t.Fatal(err)
					}
				}
				var b bytes.Buffer
				if _, err := a.WriteTo(&b); err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = b.Bytes()
				} else if !bytes.Equal(b.Bytes(), want) {
					t.Fatalf("after %d padding allocations the learned state differs from the first run's", 3*shift)
				}
			}
		})
	}
}
