package experiments

import (
	"errors"
	"math/rand/v2"

	"github.com/amt-dev/amt/scenario"
)

// streamAudit is the PCG sequence number of the audit sample's draws,
// seeded with the session's seed: independent of the image order, of the
// agent's draws and of its initialisation.
const streamAudit = 0x6175646974 // "audit"

// auditAgent is amt check's design (check.audit): a share of the session's
// follow-ups is an audit sample, drawn independently of the context and
// of every verdict — a uniform arm, then a uniform value of its parameter
// (the random agent's distribution) — and the agent chooses the others.
// Audit follow-ups are marked (Choice.Audit, counted in
// record.Run.Audit); the agent does not see them (it neither chooses nor
// learns them), so its state carries over as without an audit.
//
// Which iterations audit is fixed in advance: iteration k (from 0) is an
// audit iteration iff ⌊(k+1)·share⌋ > ⌊k·share⌋, so a session of n
// iterations has exactly ⌊n·share⌋ of them, spread evenly. Since both the
// schedule and the audit's draws ignore the images and the verdicts, the
// audit follow-ups of a variant are a uniform random sample of the images
// (in the seed's order) whatever the agent does: two checks' audit samples
// are samples of one population when the model did not change, which is
// what the regression test assumes (see package gate).
type auditAgent struct {
	inner Agent
	sc    scenario.Scenario
	share float64
	rng   *rand.Rand
	k     int
	last  bool // the last choice was an audit
}

// withAudit returns agent with an audit sample of the given share in
// [0, 1] of the session seeded with seed; share 0 returns agent itself.
func withAudit(agent Agent, sc scenario.Scenario, share float64, seed uint64) Agent {
	if share <= 0 {
		return agent
	}
	return &auditAgent{inner: agent, sc: sc, share: share, rng: rand.New(rand.NewPCG(seed, streamAudit))}
}

// auditIteration reports whether iteration k (from 0) of a session is an
// audit iteration at the given share.
func auditIteration(k int, share float64) bool {
	return int(float64(k+1)*share) > int(float64(k)*share)
}

// Choose implements Agent.
func (a *auditAgent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	k := a.k
	a.k++
	a.last = auditIteration(k, a.share)
	if !a.last {
		return a.inner.Choose(ctx, rng)
	}
	arm := a.rng.IntN(len(a.sc.Arms))
	c := Choice{Arm: arm, Param: -1, Prob: 1 / float64(len(a.sc.Arms)), Audit: true}
	if n := len(a.sc.Arms[arm].Values); n > 1 {
		c.Param = a.rng.IntN(n)
		c.Prob /= float64(n)
	}
	return c, nil
}

// Update implements Agent: the agent learns its own choices only.
func (a *auditAgent) Update(ctx []float32, c Choice, violated bool) error {
	if a.last != c.Audit {
		return errors.New("audit: update for a choice the agent did not make last")
	}
	if c.Audit {
		return nil
	}
	return a.inner.Update(ctx, c, violated)
}

// UsesContext implements contextReader: an audit of the whole session
// never consults the agent.
func (a *auditAgent) UsesContext() bool { return a.share < 1 && usesContext(a.inner) }

// Save implements saver: the agent's state (the audit has none).
func (a *auditAgent) Save(path string) error { return saveAgent(a.inner, path) }
