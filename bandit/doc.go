// Package bandit implements contextual bandits for adaptive metamorphic
// testing: policies that give a probability distribution over K arms for a
// context vector and learn from logged (context, arm, probability, cost)
// feedback.
//
// The package follows Vowpal Wabbit's reduction stack (exploration →
// cost estimator → cost-sensitive oracle → regressor), each layer
// swappable:
//
//   - regressors: a bank of per-arm cost regressors, linear or a one-hidden-
//     layer tanh network whose batched forward pass is a Gorgonia graph and
//     whose update is VW's adaptive, normalised, importance-invariant rule
//     (see bank.go for every deviation from VW);
//   - estimators: IPS, DR (doubly robust) and DM cost vectors;
//   - exploration: uniform, epsilon-greedy, online cover (VW 8.x "legacy"
//     and VW ≥ 8.10 "modern" semantics), softmax, SquareCB, bootstrap
//     Thompson sampling, LinUCB and linear Thompson sampling.
//
// Agents compose policies into the paper's hierarchical bandit over a
// scenario (package scenario: a main bandit over its arms and a parameter
// bandit per arm with a grid of values, learning the scenario's objective)
// and save to / load from versioned state files. Every agent is one entry
// of the agent table (agents.go: name, doc line, option keys, defaults,
// revision, constructor); its constructor returns a policy that can save
// its state, so an agent that cannot be saved does not compile. A change
// of an agent's code that changes its runs for the same seed raises its
// revision, which run caches key on.
//
// Costs, not rewards, are used inside: a reward r with maximum R becomes
// the cost R − r. Randomness is explicit: callers sample arms with their
// own seeded *rand.Rand (see Sample); policies that randomise internally
// (bootstrap, linear Thompson sampling, network initialisation) use a PCG
// generator derived from the seed given at construction, whose state is
// part of the saved state.
//
// The package sees only vectors, arms and numbers; it knows nothing of
// images, models or metamorphic relations.
package bandit
