package experiments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// An Agent chooses follow-ups for source cases and learns from verdicts
// (the paper's hierarchical bandit, or any baseline). Implementations wrap
// package bandit; tests use fakes.
type Agent interface {
	// Choose picks a main arm and, for a hierarchical arm, a parameter
	// index (-1 otherwise) for the context, drawing randomness from rng.
	Choose(ctx []float32, rng *rand.Rand) (Choice, error)
	// Update teaches the agent the verdict of its last choice; the agent
	// applies the reward rules itself.
	Update(ctx []float32, c Choice, violated bool) error
}

// Choice is an agent's decision: main arm and parameter index (-1 when the
// arm has no grid), and Prob, the probability with which the agent drew
// this arm and parameter together (the product of the main and the
// parameter bandit's probabilities; 0 when the agent does not say).
type Choice struct {
	Arm, Param int
	Prob       float64
	// Audit marks a follow-up of amt check's audit sample (auditAgent):
	// drawn uniformly, independently of the context and of every verdict,
	// and counted apart in record.Run.Audit.
	Audit bool
}

// A contextReader is an Agent that says whether its choices depend on the
// context (bandit agents do: random and ucb1 do not). The loop computes
// features only for agents that read them — the original's RandomAgent
// never extracted any, and its iteration timer did not see them — and
// hands the others a zero vector of the right length. Agents that do not
// implement it read the context.
type contextReader interface {
	UsesContext() bool
}

// usesContext reports whether a reads the context.
func usesContext(a Agent) bool {
	r, ok := a.(contextReader)
	return !ok || r.UsesContext()
}

// An Env answers the loop's two questions about a source case: its
// context features and the verdict of one follow-up. The online Envs of
// the case studies run the system under test; ReplayEnv looks the verdict
// up in a sweep's table. Both give the same answers for the same data,
// which is what makes replay runs faithful.
type Env interface {
	// Len is the number of source cases; cases are 0..Len()-1.
	Len() int
	// Layout is the length of the context vectors and of their trailing
	// grey-box block (features.kind sut).
	Layout() bandit.Layout
	// Load makes a case the current source case: an online Env reads and
	// decodes its image. The loop calls it before the timed part of an
	// iteration, as the original loaded the image in env.reset(), outside
	// the timer of act + step + update.
	Load(ctx context.Context, image int) error
	// Context returns the context features of a case.
	Context(ctx context.Context, image int) ([]float32, error)
	// Evaluate returns the verdict of follow-up v of a case.
	Evaluate(ctx context.Context, image int, v scenario.Variant) (Outcome, error)
}

// Outcome is the verdict of one follow-up plus the SUT's scores on the
// source and the follow-up (1/0 correctness for classification).
type Outcome struct {
	Violated                     bool
	OriginalScore, ModifiedScore float64
	// PredOriginal and PredModified are a classifier's top-1 classes on
	// the source and the follow-up, Label the source's label; −1 when
	// unknown (always for detection). Reports of violations show them.
	PredOriginal, PredModified, Label int
}

// Step is one iteration of a run, as reported to SeedsOptions.Trace.
type Step struct {
	Iteration int // 1-based
	Image     int
	Choice    Choice
	Violated  bool
	// Outcome is the follow-up's whole outcome (Violated is its verdict).
	Outcome Outcome
	// Variant is the follow-up's key ("rotation:-30"), Cost the
	// scenario's main cost of its verdict (scenario.Scenario.MainCost).
	Variant string
	Cost    float64
	// Context is the case's context, set only with loopOptions.Contexts
	// (for agents that do not read it, it is computed after the iteration,
	// outside its timer).
	Context []float32
}

// loopOptions configures one run of the loop.
type loopOptions struct {
	AgentName string // written into logs and summaries
	Seed      uint64
	// Passes over the source cases (each pass uses every case once in an
	// order shuffled by the seed); 0 means 1.
	Passes int
	// Iterations caps the run; 0 means Passes × Len().
	Iterations int
	// LogInterval is the number of iterations between log lines; 0 means
	// 100. A line is always written after the last iteration.
	LogInterval int
	// Trace, when set, is called after every iteration.
	Trace func(Step)
	// Deadline, when not zero, ends the run after the iteration during
	// which it passed (a time budget): the run's counts and log are those
	// of the iterations done. At least one iteration runs.
	Deadline time.Time
	// Contexts puts every iteration's context into its Step.
	Contexts bool
	// ParamErrors fills the run's ParamErrors: per parameterised variant,
	// the follow-ups whose top-1 class differs from a known label.
	ParamErrors bool
}

// runResult is the outcome of one run: its final counts, its progress log
// and the measured mean times (which never enter the byte-compared files
// unless timing is enabled).
type runResult struct {
	Run  record.Run
	Log  []record.LogLine
	Time record.RunTiming
}

// streamChoice is the PCG sequence number of a run's agent draws, seeded
// with the run's seed; the image order uses package data's own stream, so
// the two are independent of each other and of the agent's initialisation.
const streamChoice = 0x63686f6963 // "choic"

// imageOrder returns the source-case order of a run: passes × n indices, each
// pass a permutation of 0..n-1, reshuffled for every pass, like the
// original's np.random.shuffle of a refilled index list. It is
// data.Passes(n, seed, true, 0, passes), whose shuffle is written out so
// that orders stay byte-identical across Go releases.
func imageOrder(n int, seed uint64, passes int) []int {
	if passes <= 0 {
		passes = 1
	}
	return data.Passes(n, seed, true, 0, passes)
}

// runLoop runs the adaptive metamorphic testing loop (the paper's
// Algorithm 1) for one agent and seed: for each source case in the seed's
// order it gets the context, lets the agent choose a follow-up, evaluates
// it, updates the agent and records cumulative counts. It stops with
// ctx.Err() when ctx is cancelled.
func runLoop(ctx context.Context, env Env, sc scenario.Scenario, agent Agent, opt loopOptions) (runResult, error) {
	var res runResult
	if env.Len() == 0 {
		return res, errors.New("loop: no source cases")
	}
	passes := opt.Passes
	if passes <= 0 {
		passes = 1
	}
	order := imageOrder(env.Len(), opt.Seed, passes)
	iters := len(order)
	if opt.Iterations > 0 {
		if opt.Iterations > iters {
			return res, fmt.Errorf("loop: %d iterations requested but %d passes over %d cases give only %d", opt.Iterations, passes, env.Len(), iters)
		}
		iters = opt.Iterations
	}
	interval := opt.LogInterval
	if interval <= 0 {
		interval = 100
	}
	rng := rand.New(rand.NewPCG(opt.Seed, streamChoice))
	// Every arm and every parameterised follow-up is listed from the start
	// (with zero counts until chosen), so readers see what was never chosen.
	run := record.Run{Seed: opt.Seed, Arms: map[string]record.Counts{}, Params: map[string]record.Counts{}}
	for _, a := range sc.Arms {
		run.Arms[a.Name] = record.Counts{}
	}
	if opt.ParamErrors {
		run.ParamErrors = map[string]int{}
	}
	for _, v := range sc.Variants() {
		if !math.IsNaN(v.Value) {
			run.Params[v.Key()] = record.Counts{}
			if opt.ParamErrors {
				run.ParamErrors[v.Key()] = 0
			}
		}
	}
	var totalReward float64
	// The times of the phases of an iteration, summed. What the original
	// timed as one iteration is act (features, for agents that read them,
	// and the choice) + step (transform and SUT) + update; loading the
	// image is timed apart.
	var load, features, choose, evaluate, update time.Duration
	readsContext := usesContext(agent)
	blank := make([]float32, env.Layout().Dim)
	for it := 0; it < iters; it++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if it > 0 && !opt.Deadline.IsZero() && !time.Now().Before(opt.Deadline) {
			if n := len(res.Log); n == 0 || res.Log[n-1].Iteration != run.Iterations {
				res.Log = append(res.Log, logLine(opt.AgentName, sc.Name, run, totalReward))
			}
			break
		}
		img := order[it]
		t0 := time.Now()
		if err := env.Load(ctx, img); err != nil {
			return res, fmt.Errorf("loop: iteration %d, image %d: %w", it+1, img, err)
		}
		t1 := time.Now()
		cv := blank
		if readsContext {
			var err error
			if cv, err = env.Context(ctx, img); err != nil {
				return res, fmt.Errorf("loop: iteration %d, image %d: context: %w", it+1, img, err)
			}
		}
		t2 := time.Now()
		ch, err := agent.Choose(cv, rng)
		if err != nil {
			return res, fmt.Errorf("loop: iteration %d, image %d: choose: %w", it+1, img, err)
		}
		t3 := time.Now()
		v, err := sc.Variant(ch.Arm, ch.Param)
		if err != nil {
			return res, fmt.Errorf("loop: iteration %d: agent's choice: %w", it+1, err)
		}
		out, err := env.Evaluate(ctx, img, v)
		if err != nil {
			return res, fmt.Errorf("loop: iteration %d, image %d, %s: %w", it+1, img, v.Key(), err)
		}
		t4 := time.Now()
		if err := agent.Update(cv, ch, out.Violated); err != nil {
			return res, fmt.Errorf("loop: iteration %d, image %d: update: %w", it+1, img, err)
		}
		t5 := time.Now()
		load += t1.Sub(t0)
		features += t2.Sub(t1)
		choose += t3.Sub(t2)
		evaluate += t4.Sub(t3)
		update += t5.Sub(t4)

		arm := sc.Arms[v.Arm]
		viol := 0
		if out.Violated {
			viol = 1
			run.Violations++
			totalReward += sc.MainReward(v.Arm)
		}
		run.Iterations++
		run.Arms[arm.Name] = run.Arms[arm.Name].Add(record.Counts{Count: 1, Violations: viol})
		// wrong: the follow-up's top-1 class is not the known label.
		wrong := 0
		if out.Label >= 0 && out.PredModified != out.Label {
			wrong = 1
		}
		if !math.IsNaN(v.Value) {
			run.Params[v.Key()] = run.Params[v.Key()].Add(record.Counts{Count: 1, Violations: viol})
			if opt.ParamErrors {
				run.ParamErrors[v.Key()] += wrong
			}
		}
		if ch.Audit {
			if run.Audit == nil {
				run.Audit = map[string]record.Counts{}
			}
			run.Audit[v.Key()] = run.Audit[v.Key()].Add(record.Counts{Count: 1, Violations: viol})
			if opt.ParamErrors && !math.IsNaN(v.Value) {
				if run.AuditErrors == nil {
					run.AuditErrors = map[string]int{}
				}
				run.AuditErrors[v.Key()] += wrong
			}
		}
		run.OriginalScore += out.OriginalScore
		run.ModifiedScore += out.ModifiedScore
		if opt.Trace != nil {
			st := Step{Iteration: it + 1, Image: img, Choice: ch, Violated: out.Violated, Outcome: out, Variant: v.Key(), Cost: sc.MainCost(v.Arm, out.Violated)}
			if opt.Contexts {
				st.Context = cv
				if !readsContext {
					if st.Context, err = env.Context(ctx, img); err != nil {
						return res, fmt.Errorf("loop: iteration %d, image %d: context: %w", it+1, img, err)
					}
				}
			}
			opt.Trace(st)
		}
		if (it+1)%interval == 0 || it+1 == iters {
			res.Log = append(res.Log, logLine(opt.AgentName, sc.Name, run, totalReward))
		}
	}
	res.Run = run
	n := float64(run.Iterations)
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 / n }
	ms := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 / n }
	res.Time = record.RunTiming{
		MeanDecisionUS:  us(choose + update),
		MeanIterationMS: ms(features + choose + evaluate + update),
		MeanLoadMS:      ms(load),
		MeanFeaturesMS:  ms(features),
		MeanChooseUS:    us(choose),
		MeanEvaluateMS:  ms(evaluate),
		MeanUpdateUS:    us(update),
	}
	return res, nil
}

func logLine(agent, scenario string, run record.Run, reward float64) record.LogLine {
	l := record.LogLine{
		Agent: agent, Scenario: scenario, Seed: run.Seed, Iteration: run.Iterations,
		Violations: run.Violations, Reward: reward,
		Arms: make(map[string]record.Counts, len(run.Arms)),
	}
	for k, v := range run.Arms {
		l.Arms[k] = v
	}
	if len(run.Params) > 0 {
		l.Params = make(map[string]record.Counts, len(run.Params))
		for k, v := range run.Params {
			l.Params[k] = v
		}
	}
	if run.Iterations > 0 {
		l.OriginalAccuracy = run.OriginalScore / float64(run.Iterations)
		l.ModifiedAccuracy = run.ModifiedScore / float64(run.Iterations)
	}
	return l
}
