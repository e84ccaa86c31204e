package experiments

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// The follow-up designs the gate power study compares (PowerMethods).
const (
	// MethodAdaptive is amt check before issue #33: the check agent
	// chooses every follow-up and the regression test compares all of
	// them.
	MethodAdaptive = "adaptive"
	// MethodAdaptiveAudit is the check agent with an audit sample of
	// PowerStudy.Audit of the budget (check.audit < 1): the test compares
	// the audit samples.
	MethodAdaptiveAudit = "adaptive+audit"
	// MethodRandom is uniform random selection, i.e. check.audit 1 (amt
	// check's default): every follow-up is an audit draw (uniform arm,
	// then uniform value), and the test compares all of them.
	MethodRandom = "random"
	// MethodRoundRobin is the fixed round-robin design (roundRobin), its
	// position carried from check to check like an agent's state; the test
	// compares all follow-ups.
	MethodRoundRobin = "round-robin"
)

// PowerMethods lists the designs of the gate power study, in report order.
func PowerMethods() []string {
	return []string{MethodAdaptive, MethodAdaptiveAudit, MethodRandom, MethodRoundRobin}
}

// streamReseed is the PCG sequence number that derives the second check's
// seed of a reseeded pair from the cycle's seed.
const streamReseed = 0x7265736565 // "resee"

// PowerPair is one model change of the study: the CI cycle checks model
// Old, then model New with the state and the results of Old's check.
type PowerPair struct {
	// Name names the pair in the outcomes and the report.
	Name string
	// Old and New name the models (keys of PowerStudy.Envs).
	Old, New string
	// Reseed gives the second check another seed (derived from the
	// cycle's with the PCG stream "resee"); otherwise both checks use the
	// cycle's seed, as a CI job whose configuration fixes check.seed does.
	Reseed bool
	// Regressed is the relation the change regressed ("" for a change
	// that should pass).
	Regressed string
}

// PowerStudy is the gate power study: every pair, method, budget and
// cycle seed is one CI cycle, replayed in memory.
type PowerStudy struct {
	Scenario scenario.Scenario
	// Envs are the models' replay environments (their cached sweeps:
	// same images, same contexts), by name.
	Envs map[string]Env
	// Agent is the check agent (MethodAdaptive, MethodAdaptiveAudit);
	// Audit the audit share of MethodAdaptiveAudit, in (0, 1).
	Agent AgentSpec
	Audit float64
	// Regression is the test's margin and level.
	Regression gate.Regression
	Pairs      []PowerPair
	// Budgets are the iterations of each check, ascending; Passes the
	// passes over the images a check's image order spans (the config's
	// passes; 0 = 1).
	Budgets []int
	Passes  int
	Methods []string
	Cycles  []uint64
	// Workers run cycles concurrently (0 = one per core); the outcomes do
	// not depend on it.
	Workers int
}

// PowerOutcome is the decision of one CI cycle's second check.
type PowerOutcome = record.GatePowerOutcome

// Run replays every cycle and returns the outcomes in the order pair,
// method, budget, cycle. progress (may be nil) gets the stage "gate
// power" and counts CI cycles.
//
// A check of budget b is the first b iterations of the same check with a
// larger budget (the image order and the draws depend on the seed only),
// so each old model's first check runs once per method and cycle, to the
// largest budget, and the state and counts it has after b iterations
// start and judge the second check of budget b. Pairs with the same old
// model share that first check.
func (st PowerStudy) Run(ctx context.Context, progress ProgressFunc) ([]PowerOutcome, error) {
	if len(st.Budgets) == 0 || len(st.Cycles) == 0 || len(st.Pairs) == 0 {
		return nil, fmt.Errorf("gate power: no budgets, cycles or pairs")
	}
	for i, b := range st.Budgets {
		if b <= 0 || (i > 0 && b <= st.Budgets[i-1]) {
			return nil, fmt.Errorf("gate power: budgets %v: want positive budgets in ascending order", st.Budgets)
		}
	}
	for _, p := range st.Pairs {
		for _, m := range []string{p.Old, p.New} {
			if st.Envs[m] == nil {
				return nil, fmt.Errorf("gate power: pair %s: no model %q", p.Name, m)
			}
		}
	}
	type job struct {
		old    string
		method string
		cycle  uint64
	}
	var jobs []job
	seen := map[job]bool{}
	for _, p := range st.Pairs {
		for _, m := range st.Methods {
			for _, c := range st.Cycles {
				if j := (job{p.Old, m, c}); !seen[j] {
					seen[j] = true
					jobs = append(jobs, j)
				}
			}
		}
	}
	type key struct {
		pair, method string
		budget       int
		cycle        uint64
	}
	index := map[key]int{}
	var out []PowerOutcome
	for _, p := range st.Pairs {
		for _, m := range st.Methods {
			for _, b := range st.Budgets {
				for _, c := range st.Cycles {
					index[key{p.Name, m, b, c}] = len(out)
					out = append(out, PowerOutcome{Pair: p.Name, Method: m, Budget: b, Cycle: c})
				}
			}
		}
	}
	workers := st.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	stage := Stage{Name: "gate power", Unit: "cycle"}
	if progress != nil {
		progress(stage, 0, len(out))
	}
	var (
		mu    sync.Mutex
		done  int
		first error
		wg    sync.WaitGroup
	)
	next := make(chan job)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				res, err := st.cycles(ctx, j.old, j.method, j.cycle)
				mu.Lock()
				if err != nil && first == nil {
					first = fmt.Errorf("gate power: model %s, %s, cycle %d: %w", j.old, j.method, j.cycle, err)
					cancel()
				}
				for _, o := range res {
					out[index[key{o.Pair, o.Method, o.Budget, o.Cycle}]] = o
				}
				done += len(res)
				if progress != nil {
					progress(stage, done, len(out))
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// cycles replays the CI cycles of one old model, method and cycle seed,
// as examples/ci/amt-check.sh runs them: a check of the old model with a
// fresh agent, which saves its state; then, for every pair from that
// model and every budget, a check of the new model continuing from that
// state, judged against the first check's results.
func (st PowerStudy) cycles(ctx context.Context, old, method string, seed uint64) ([]PowerOutcome, error) {
	sc := st.Scenario
	env := st.Envs[old]
	layout := env.Layout()
	share, audit := 0.0, false
	var agent Agent
	// save returns the state a check saves; restore makes an agent that
	// continues from it (each second check from its own copy, as a snapshot
	// may start several).
	var save func() (any, error)
	var restore func(any) (Agent, error)
	switch method {
	case MethodAdaptive, MethodAdaptiveAudit:
		a, err := NewAgent(st.Agent, sc, layout, seed)
		if err != nil {
			return nil, err
		}
		if method == MethodAdaptiveAudit {
			share, audit = st.Audit, true
		}
		agent = withAudit(a, sc, share, seed)
		// The saved state, exactly as the state file holds it.
		save = func() (any, error) {
			var buf bytes.Buffer
			if _, err := a.(*banditAgent).a.WriteTo(&buf); err != nil {
				return nil, err
			}
			return buf.Bytes(), nil
		}
		restore = func(state any) (Agent, error) {
			b, err := bandit.ReadAgent(bytes.NewReader(state.([]byte)), sc, layout)
			if err != nil {
				return nil, err
			}
			return &banditAgent{a: b}, nil
		}
	case MethodRandom:
		// check.audit 1: the agent is never consulted.
		share, audit = 1, true
		agent = withAudit(nil, sc, share, seed)
		save = func() (any, error) { return nil, nil }
		restore = func(any) (Agent, error) { return nil, nil }
	case MethodRoundRobin:
		rr := newRoundRobin(sc)
		agent = rr
		save = func() (any, error) { return rr.clone(), nil }
		restore = func(state any) (Agent, error) { return state.(*roundRobin).clone(), nil }
	default:
		return nil, fmt.Errorf("unknown method %q", method)
	}
	// The first check, to the largest budget, with a snapshot at each.
	type snapshot struct {
		state any
		run   record.Run
	}
	snaps := map[int]snapshot{}
	run := record.Run{Params: map[string]record.Counts{}, Arms: map[string]record.Counts{}}
	var saveErr error
	trace := func(s Step) {
		v, err := sc.Variant(s.Choice.Arm, s.Choice.Param)
		if err != nil {
			saveErr = err
			return
		}
		countStep(&run, sc, v, s.Choice.Audit, s.Violated)
		if !slices.Contains(st.Budgets, s.Iteration) {
			return
		}
		state, err := save()
		if err != nil {
			saveErr = err
			return
		}
		snaps[s.Iteration] = snapshot{state: state, run: cloneRun(run)}
	}
	if _, err := runLoop(ctx, env, sc, agent, loopOptions{Seed: seed, Passes: st.Passes, Iterations: st.Budgets[len(st.Budgets)-1], Trace: trace}); err != nil {
		return nil, err
	}
	if saveErr != nil {
		return nil, saveErr
	}
	var out []PowerOutcome
	for _, p := range st.Pairs {
		if p.Old != old {
			continue
		}
		seed2 := seed
		if p.Reseed {
			seed2 = rand.New(rand.NewPCG(seed, streamReseed)).Uint64()
		}
		for _, b := range st.Budgets {
			sn := snaps[b]
			a, err := restore(sn.state)
			if err != nil {
				return nil, err
			}
			failed, err := st.decide(ctx, p, withAudit(a, sc, share, seed2), sn.run, b, seed2, audit)
			if err != nil {
				return nil, err
			}
			out = append(out, PowerOutcome{Pair: p.Name, Method: method, Budget: b, Cycle: seed, Failed: failed})
		}
	}
	return out, nil
}

// countStep adds one follow-up's verdict to a run's counts, as runLoop
// does.
func countStep(run *record.Run, sc scenario.Scenario, v scenario.Variant, audit, violated bool) {
	c := record.Counts{Count: 1}
	if violated {
		c.Violations = 1
		run.Violations++
	}
	run.Iterations++
	name := sc.Arms[v.Arm].Name
	run.Arms[name] = run.Arms[name].Add(c)
	if !math.IsNaN(v.Value) {
		run.Params[v.Key()] = run.Params[v.Key()].Add(c)
	}
	if audit {
		if run.Audit == nil {
			run.Audit = map[string]record.Counts{}
		}
		run.Audit[v.Key()] = run.Audit[v.Key()].Add(c)
	}
}

// cloneRun returns a copy of a run's counts.
func cloneRun(r record.Run) record.Run {
	c := r
	c.Arms, c.Params = maps.Clone(r.Arms), maps.Clone(r.Params)
	if r.Audit != nil {
		c.Audit = maps.Clone(r.Audit)
	}
	return c
}

// decide runs the second check of a cycle and returns the relations whose
// regression condition failed against the first check's run.
func (st PowerStudy) decide(ctx context.Context, pr PowerPair, agent Agent, base record.Run, budget int, seed uint64, audit bool) ([]string, error) {
	sc := st.Scenario
	r1, err := runLoop(ctx, st.Envs[pr.New], sc, agent, loopOptions{Seed: seed, Passes: st.Passes, Iterations: budget})
	if err != nil {
		return nil, err
	}
	reg := st.Regression
	reg.Sample = decisionCells(sc, r1.Run, audit)
	d, err := gate.Decide(gate.Conditions{Regression: &reg}, sc.Actions(), record.Counts{Count: r1.Run.Iterations, Violations: r1.Run.Violations},
		gate.CellsOf(record.DescribeScenario(sc), []record.Run{r1.Run}), decisionCells(sc, base, audit))
	if err != nil {
		return nil, err
	}
	var failed []string
	for _, m := range d.MRs {
		if m.Failed {
			failed = append(failed, m.MR)
		}
	}
	return failed, nil
}

// decisionCells are the cells a check's regression test compares: its
// audit sample's with an audit, all its follow-ups' otherwise.
func decisionCells(sc scenario.Scenario, run record.Run, audit bool) gate.Cells {
	if audit {
		return gate.AuditCellsOf([]record.Run{run})
	}
	return gate.CellsOf(record.DescribeScenario(sc), []record.Run{run})
}
