package bandit

import (
	"fmt"
	"math/rand/v2"
)

// CostModel is a per-arm cost regressor (linear, or a tanh network with
// Hidden units) trained with VW's update rule, for direct-method and
// doubly-robust estimates outside a policy (e.g. off-policy evaluation).
type CostModel struct {
	k, dim int
	bank   *bank
	gd     gdState
	rows   []int
	labels []float64
	wts    []float64
}

// NewCostModel returns a cost model over k arms for contexts of dimension
// dim with hidden tanh units (0 = linear), initialised from seed.
func NewCostModel(k, dim, hidden int, seed uint64) (*CostModel, error) {
	if k < 1 || dim < 1 || hidden < 0 {
		return nil, fmt.Errorf("bandit: cost model needs k >= 1, dim >= 1, hidden >= 0; got %d, %d, %d", k, dim, hidden)
	}
	b, err := newBank(k, dim, hidden, rand.New(rand.NewPCG(seed, 0x636d)))
	if err != nil {
		return nil, err
	}
	return &CostModel{k: k, dim: dim, bank: b, gd: initState(0.5, b), rows: []int{0}, labels: []float64{0}, wts: []float64{0}}, nil
}

// Predict fills dst (len k) with the predicted cost of every arm for ctx,
// clipped to the range of costs learned so far.
func (m *CostModel) Predict(ctx []float32, dst []float64) error {
	if err := checkContext(ctx, m.dim); err != nil {
		return err
	}
	if len(dst) != m.k {
		return fmt.Errorf("bandit: cost model prediction buffer has %d entries, want %d", len(dst), m.k)
	}
	if err := m.bank.forward(ctx); err != nil {
		return err
	}
	for a := range dst {
		dst[a] = m.gd.clip(float64(m.bank.raw[a]))
	}
	return nil
}

// Learn regresses arm's prediction for ctx towards cost with the given
// importance weight (> 0).
func (m *CostModel) Learn(ctx []float32, arm int, cost, weight float64) error {
	if err := checkLearn(ctx, m.dim, m.k, arm, 1, cost); err != nil {
		return err
	}
	if !(weight > 0) || weight > 1/minProb {
		return fmt.Errorf("%w: weight %v, want 0 < w <= %g", ErrInput, weight, 1/minProb)
	}
	if err := m.bank.forward(ctx); err != nil {
		return err
	}
	m.rows[0], m.labels[0], m.wts[0] = arm, cost, weight
	m.bank.learn(&m.gd, m.rows, m.labels, m.wts)
	return nil
}
