package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// problem is a synthetic contextual bandit with known expected costs.
type problem struct {
	name   string
	k, d   int
	rounds int
	ctx    func(rng *rand.Rand) []float32
	mean   func(x []float32, a int) float64 // expected cost in [0, 1]
}

// linearProblem: expected cost of arm a is 0.5 + 0.35·w_a·x, x ~ U(−1,1)^d.
func linearProblem(k, d, rounds int, seed uint64) problem {
	rng := rand.New(rand.NewPCG(seed, 99))
	w := make([][]float64, k)
	for a := range w {
		w[a] = make([]float64, d)
		for i := range w[a] {
			w[a][i] = rng.NormFloat64() / math.Sqrt(float64(d))
		}
	}
	return problem{
		name: fmt.Sprintf("linear-k%d", k), k: k, d: d, rounds: rounds,
		ctx: func(rng *rand.Rand) []float32 { return randCtx(rng, d) },
		mean: func(x []float32, a int) float64 {
			s := 0.0
			for i, v := range x {
				s += w[a][i] * float64(v)
			}
			return min(max(0.5+0.35*s, 0), 1)
		},
	}
}

// xorProblem: two arms; arm 0 is good (cost 0.1, else 0.9) iff the signs
// of x0 and x1 agree. Every per-arm linear cost model predicts 0.5.
func xorProblem(rounds int) problem {
	return problem{
		name: "xor", k: 2, d: 2, rounds: rounds,
		ctx: func(rng *rand.Rand) []float32 {
			x := make([]float32, 2)
			for i := range x {
				s := float32(1)
				if rng.IntN(2) == 0 {
					s = -1
				}
				x[i] = s * float32(0.5+0.5*rng.Float64())
			}
			return x
		},
		mean: func(x []float32, a int) float64 {
			agree := (x[0] > 0) == (x[1] > 0)
			if agree == (a == 0) {
				return 0.1
			}
			return 0.9
		},
	}
}

// simulate runs p on pr and returns the average regret over the last 20 %
// of rounds and the uniform policy's regret on the same contexts.
func simulate(t testing.TB, p Policy, pr problem, seed uint64) (regret, uniformRegret float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	tail := pr.rounds / 5
	for r := 0; r < pr.rounds; r++ {
		x := pr.ctx(rng)
		dist, err := p.Distribution(x)
		if err != nil {
			t.Fatal(err)
		}
		a := Sample(dist, rng)
		cost := 0.0
		if rng.Float64() < pr.mean(x, a) {
			cost = 1
		}
		if err := p.Learn(x, a, dist[a], cost); err != nil {
			t.Fatal(err)
		}
		if r >= pr.rounds-tail {
			best, avg := math.Inf(1), 0.0
			for b := 0; b < pr.k; b++ {
				m := pr.mean(x, b)
				best = min(best, m)
				avg += m / float64(pr.k)
			}
			regret += (pr.mean(x, a) - best) / float64(tail)
			uniformRegret += (avg - best) / float64(tail)
		}
	}
	return regret, uniformRegret
}

// learners lists every learning algorithm with the largest accepted ratio
// of its regret to uniform's. Cover with 3 policies and ψ = 1 (the paper's
// setting) keeps about a third of the mass on a second arm while gaps are
// below ≈ 1/3 (its ideal ratio at K = 2 is 2/3), and the modern semantics
// learn worse by design (VW ≥ 9 measured 0.64 at K = 3 after 20k rounds,
// see vw-cover-dr-nn.md §8).
//
// perArm marks learners whose oracle learns each arm only from that arm's
// own plays (importance-weighted regression, direct regression, ridge per
// arm): they get twice the rounds on the 50-arm problem.
var learners = []struct {
	agent  string
	opts   Options
	bound  float64
	perArm bool
}{
	{"cover", nil, 0.85, false},
	{"cover", Options{"hidden": "0"}, 0.85, false},
	{"cover-modern", nil, 0.85, false},
	{"epsilon-greedy", nil, 0.7, true},
	{"softmax", nil, 0.7, true},
	{"squarecb", nil, 0.7, true},
	{"bootstrap-ts", nil, 0.7, true},
	{"linucb", nil, 0.7, true},
	{"lints", nil, 0.7, true},
}

func newTestPolicy(t testing.TB, agent string, opts Options, k, d int, seed uint64) Policy {
	t.Helper()
	cfg, err := Resolve(agent, opts)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(agent, k, d, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRegretBelowUniform checks that every learning algorithm's regret over
// the last 20 % of rounds is clearly below uniform random (see learners
// for the bounds), on linear problems with 2, 10 and 50 arms.
func TestRegretBelowUniform(t *testing.T) {
	problems := []problem{linearProblem(2, 4, 3000, 1), linearProblem(10, 4, 3000, 2)}
	if !testing.Short() {
		problems = append(problems, linearProblem(50, 4, 10000, 3))
	} else {
		problems = append(problems, linearProblem(50, 4, 4000, 3))
	}
	for _, pr := range problems {
		for _, l := range learners {
			name := fmt.Sprintf("%s/%s/%v", pr.name, l.agent, l.opts)
			t.Run(name, func(t *testing.T) {
				p := newTestPolicy(t, l.agent, l.opts, pr.k, pr.d, 5)
				pr := pr
				if l.perArm && pr.k >= 50 {
					pr.rounds *= 2
				}
				reg, uni := simulate(t, p, pr, 11)
				t.Logf("regret %.4f, uniform %.4f, ratio %.2f", reg, uni, reg/uni)
				if reg > l.bound*uni {
					t.Errorf("regret over last 20%% = %.4f, want < %v × uniform's %.4f", reg, l.bound, uni)
				}
			})
		}
	}
}

// TestCoverNNSolvesXOR checks that cover with the neural regressor solves a
// problem no linear policy can, while linear cover and LinUCB stay near
// uniform.
func TestCoverNNSolvesXOR(t *testing.T) {
	pr := xorProblem(3000)
	cases := []struct {
		agent  string
		opts   Options
		solves bool
	}{
		{"cover", nil, true},
		{"cover", Options{"hidden": "0"}, false},
		{"linucb", nil, false},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s/%v", c.agent, c.opts), func(t *testing.T) {
			p := newTestPolicy(t, c.agent, c.opts, pr.k, pr.d, 5)
			reg, uni := simulate(t, p, pr, 13)
			t.Logf("regret %.4f, uniform %.4f, ratio %.2f", reg, uni, reg/uni)
			if c.solves && reg > 0.45*uni {
				t.Errorf("regret %.4f, want < 0.45 × uniform's %.4f", reg, uni)
			}
			if !c.solves && reg < 0.6*uni {
				t.Errorf("linear policy regret %.4f is far below uniform's %.4f on XOR; the test problem is broken", reg, uni)
			}
		})
	}
}
