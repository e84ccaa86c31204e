package bandit

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/mr"
)

func benchBank(b *testing.B, m, learnRows int) {
	rng := rand.New(rand.NewPCG(1, 2))
	bk, err := newBank(m, 512, 16, rng)
	if err != nil {
		b.Fatal(err)
	}
	st := &gdState{Eta: 0.5}
	rows := make([]int, learnRows)
	labels := make([]float64, learnRows)
	wts := make([]float64, learnRows)
	for i := range rows {
		rows[i] = i
		labels[i] = float64(i % 3)
		wts[i] = 1
	}
	xs := make([][]float32, 16)
	for i := range xs {
		xs[i] = randCtx(rng, 512)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := bk.forward(xs[i%16]); err != nil {
			b.Fatal(err)
		}
		if learnRows > 0 {
			bk.learn(st, rows, labels, wts)
		}
	}
}

func BenchmarkBankForward144(b *testing.B)      { benchBank(b, 144, 0) }
func BenchmarkBankForwardLearn144(b *testing.B) { benchBank(b, 144, 109) }

func BenchmarkCoverSmall(b *testing.B) {
	cfg, _ := Resolve("cover", nil)
	p, err := NewPolicy("cover", 50, 4, cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < b.N; i++ {
		x := randCtx(rng, 4)
		d, _ := p.Distribution(x)
		a := Sample(d, rng)
		if err := p.Learn(x, a, d[a], float64(rng.IntN(2))); err != nil {
			b.Fatal(err)
		}
	}
}

// The hierarchical benchmarks also report cpu-ns/op, the process CPU time
// per decision, which is less sensitive than ns/op to other processes
// sharing the machine.

// featureCtx returns n ResNet-like 512-d contexts (non-negative, mean ≈ 0.8).
func featureCtx(n int) [][]float32 {
	rng := rand.New(rand.NewPCG(7, 7))
	xs := make([][]float32, n)
	for i := range xs {
		xs[i] = make([]float32, 512)
		for j := range xs[i] {
			xs[i][j] = float32(math.Abs(rng.NormFloat64()))
		}
	}
	return xs
}

// BenchmarkHierarchicalDecision is one decision (Choose) plus update of the
// paper's hierarchical agent: cover, 3 policies, ψ = 1, NN 16, 512-d
// context, K = 7 main arms with 36-arm rotation and 18-arm shear parameter
// bandits, arms drawn by the agent itself.
func BenchmarkHierarchicalDecision(b *testing.B) {
	benchDecisions(b, func(a *Agent, x []float32, rng *rand.Rand) (Choice, error) {
		return a.Choose(x, rng)
	})
}

// BenchmarkHierarchicalDecisionRotation is the worst case of the above:
// every decision queries and trains the main bandit (K = 7) and the 36-arm
// rotation bandit.
func BenchmarkHierarchicalDecisionRotation(b *testing.B) {
	benchDecisions(b, func(a *Agent, x []float32, rng *rand.Rand) (Choice, error) {
		p, err := a.Main().Distribution(x)
		if err != nil {
			return Choice{}, err
		}
		q, err := a.Sub(5).Distribution(x)
		if err != nil {
			return Choice{}, err
		}
		c := Choice{Arm: 5, ArmProb: round2(max(p[5], 1./3)), Param: Sample(q, rng)}
		c.ParamProb = round2(q[c.Param])
		return c, nil
	})
}

// benchDecisions times choose plus the update of the paper's hierarchical
// agent on 64 feature contexts in turn, a third of the outcomes violations,
// and reports the CPU time per decision too.
func benchDecisions(b *testing.B, choose func(a *Agent, x []float32, rng *rand.Rand) (Choice, error)) {
	a, err := New("cover", mr.Hierarchical(), Layout{Dim: 512}, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	xs := featureCtx(64)
	rng := rand.New(rand.NewPCG(1, 1))
	b.ResetTimer()
	cpu0 := cpuTime()
	defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for i := 0; i < b.N; i++ {
		x := xs[i%len(xs)]
		c, err := choose(a, x, rng)
		if err != nil {
			b.Fatal(err)
		}
		if err := a.Update(x, c, rng.IntN(3) == 0); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSaveLoad saves and loads the paper's hierarchical cover agent
// (512-d context), the per-run cost of "load existing or initialise new".
func BenchmarkSaveLoad(b *testing.B) {
	a, err := New("cover", mr.Hierarchical(), Layout{Dim: 512}, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "agent.state")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := a.Save(path); err != nil {
			b.Fatal(err)
		}
		if _, err := Load(path, mr.Hierarchical(), Layout{Dim: 512}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if st, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(st.Size()), "file-bytes")
	}
}

// BenchmarkHTSDecision is one decision (Choose) plus update of the hts
// agent with its defaults (standardisation and projection included) on the
// paper's hierarchical scenario with 512-d feature contexts, and with 11
// grey-box values appended (CIFAR-10 softmax and margin), a third of the
// outcomes violations. Compare with BenchmarkHierarchicalDecision (the
// paper's cover agent) in the same run.
func BenchmarkHTSDecision(b *testing.B) {
	for _, grey := range []int{0, 11} {
		name := "features512"
		if grey > 0 {
			name = "features512+grey11"
		}
		b.Run(name, func(b *testing.B) {
			a, err := New("hts", mr.Hierarchical(), Layout{Dim: 512 + grey, Grey: grey}, nil, 1)
			if err != nil {
				b.Fatal(err)
			}
			xs := featureCtx(64)
			rng := rand.New(rand.NewPCG(1, 1))
			for i := range xs {
				for k := 0; k < grey; k++ {
					xs[i] = append(xs[i], float32(rng.Float64()))
				}
			}
			b.ResetTimer()
			cpu0 := cpuTime()
			defer func() { b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op") }()
			for i := 0; i < b.N; i++ {
				x := xs[i%len(xs)]
				c, err := a.Choose(x, rng)
				if err != nil {
					b.Fatal(err)
				}
				if err := a.Update(x, c, i%3 == 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
