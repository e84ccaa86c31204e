package bandit

import (
	"math"
	"math/rand/v2"
)

// An exploration is what tells the four cost-sensitive agents apart (see
// csPolicy): how many policy blocks their bank holds, how those learn, and
// how the policies' predictions become a distribution. Each agent's table
// entry picks its exploration once; csPolicy asks it instead of switching
// on the agent.
type exploration interface {
	// bags returns the number of policy blocks, each a regressor per arm.
	bags(cfg Config) int
	// direct reports whether the policies learn plain online regression
	// on the chosen arm with weight 1, with no estimator (and so no
	// estimator block in the bank).
	direct() bool
	// bagWeight returns the weight with which one bag learns the current
	// example, multiplying the estimator's weight: 1, or for online
	// bagging a Poisson(1) draw from rng (0 = the bag skips the example).
	bagWeight(rng *rand.Rand) float64
	// distribution fills pr (one entry per arm) from the bank's outputs
	// after p.bank.forward.
	distribution(p *csPolicy, pr []float64)
}

// oneBag is the learning an exploration embeds unless it says otherwise:
// one policy block, learning the estimator's cost vector with the
// estimator's weight.
type oneBag struct{}

func (oneBag) bags(Config) int              { return 1 }
func (oneBag) direct() bool                 { return false }
func (oneBag) bagWeight(*rand.Rand) float64 { return 1 }

// epsGreedy is epsilon-greedy's exploration (see csPolicy).
type epsGreedy struct{ oneBag }

func (epsGreedy) distribution(p *csPolicy, pr []float64) {
	k := p.k
	best := argmin(p.bank.raw[:k])
	for a := range pr {
		pr[a] = p.cfg.Epsilon / float64(k)
	}
	pr[best] = 1 - p.cfg.Epsilon*float64(k-1)/float64(k)
}

// softmax is softmax's exploration (see csPolicy).
type softmax struct{ oneBag }

func (softmax) distribution(p *csPolicy, pr []float64) {
	// Predictions clipped to the label range: a raw output far outside
	// it (possible after a large importance weight) must not freeze
	// the distribution.
	lo := math.Inf(1)
	for a := range pr {
		pr[a] = p.gd.clip(float64(p.bank.raw[a]))
		lo = min(lo, pr[a])
	}
	sum := 0.0
	for a := range pr {
		pr[a] = math.Exp(-p.cfg.Lambda * (pr[a] - lo) / p.scale())
		sum += pr[a]
	}
	for a := range pr {
		pr[a] /= sum
	}
}

// bootstrapTS is bootstrap-ts's exploration (see csPolicy): the bags
// option's policy blocks, each learning with a Poisson(1) weight.
type bootstrapTS struct{}

func (bootstrapTS) bags(cfg Config) int { return cfg.Bags }
func (bootstrapTS) direct() bool        { return false }

func (bootstrapTS) bagWeight(rng *rand.Rand) float64 { return float64(poisson1(rng)) }

func (bootstrapTS) distribution(p *csPolicy, pr []float64) {
	k := p.k
	for b := 0; b < p.bags; b++ {
		pr[argmin(p.bank.raw[b*k:(b+1)*k])]++
	}
	for a := range pr {
		pr[a] /= float64(p.bags)
	}
}

// poisson1 draws from Poisson(1) (Knuth's method).
func poisson1(rng *rand.Rand) int {
	l, n, prod := math.Exp(-1), 0, rng.Float64()
	for prod > l {
		n++
		prod *= rng.Float64()
	}
	return n
}

// squareCB is squarecb's exploration (see csPolicy): a direct regression
// oracle.
type squareCB struct{ oneBag }

func (squareCB) direct() bool { return true }

func (squareCB) distribution(p *csPolicy, pr []float64) {
	k := p.k
	s := p.bank.raw[:k]
	best := argmin(s)
	gamma := p.cfg.GammaScale * math.Pow(float64(p.t+1), p.cfg.GammaExp)
	rest := 0.0
	for a := range pr {
		if a == best {
			continue
		}
		gap := max(p.gd.clip(float64(s[a]))-p.gd.clip(float64(s[best])), 0) / p.scale()
		pr[a] = 1 / (float64(k) + gamma*gap)
		rest += pr[a]
	}
	pr[best] = max(1-rest, 0)
}
