package experiments

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/scenario"
)

// banditAgent adapts *bandit.Agent to Agent: it keeps the probabilities of
// the last choice for the update.
type banditAgent struct {
	a    *bandit.Agent
	last bandit.Choice
	has  bool
}

// NewAgent returns the bandit agent of spec for the scenario and contexts
// of the given layout (see bandit.New); seed derives its internal
// randomness.
func NewAgent(spec AgentSpec, sc scenario.Scenario, layout bandit.Layout, seed uint64) (Agent, error) {
	a, err := bandit.New(spec.Name, sc, layout, spec.Options, seed)
	if err != nil {
		return nil, err
	}
	return &banditAgent{a: a}, nil
}

// loadOrNewAgent is NewAgent that continues from the state file at path
// when it exists (the paper's "load existing or initialise new bandit");
// loaded reports which happened.
func loadOrNewAgent(path string, spec AgentSpec, sc scenario.Scenario, layout bandit.Layout, seed uint64) (a Agent, loaded bool, err error) {
	ba, loaded, err := bandit.LoadOrNew(path, spec.Name, sc, layout, spec.Options, seed)
	if err != nil {
		return nil, false, err
	}
	return &banditAgent{a: ba}, loaded, nil
}

func (b *banditAgent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	c, err := b.a.Choose(ctx, rng)
	if err != nil {
		return Choice{}, err
	}
	b.last, b.has = c, true
	return Choice{Arm: c.Arm, Param: c.Param, Prob: c.Prob}, nil
}

// UsesContext implements contextReader.
func (b *banditAgent) UsesContext() bool { return b.a.UsesContext() }

func (b *banditAgent) Update(ctx []float32, c Choice, violated bool) error {
	if !b.has || b.last.Arm != c.Arm || b.last.Param != c.Param || b.last.Prob != c.Prob {
		return errors.New("agent: update for a choice the agent did not make last")
	}
	b.has = false
	return b.a.Update(ctx, b.last, violated)
}

// Save writes the agent's state file (atomically).
func (b *banditAgent) Save(path string) error { return b.a.Save(path) }

// saver is an agent whose state can be saved.
type saver interface{ Save(path string) error }

func saveAgent(a Agent, path string) error {
	s, ok := a.(saver)
	if !ok {
		return fmt.Errorf("agent state %s: this agent cannot be saved", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return s.Save(path)
}
