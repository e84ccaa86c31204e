// Package ope estimates the expected cost of a contextual bandit policy
// from logged (context, arm, probability, cost) decisions of another
// policy: inverse propensity scoring (IPS), self-normalised IPS (SNIPS)
// and doubly robust (DR) estimates with normal-approximation confidence
// intervals (Dudík, Langford & Li 2011; Swaminathan & Joachims 2015).
//
// Evaluate runs a policy over a log in order, asking it for its
// distribution before it (optionally) learns from each record, so on-line
// learners are evaluated progressively as they would have behaved.
package ope

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/limits"
)

// Record is one logged decision: the context, the chosen arm (0-based), the
// probability with which the logging policy chose it and the observed cost.
type Record struct {
	Context []float32 `json:"context"`
	Arm     int       `json:"arm"`
	Prob    float64   `json:"prob"`
	Cost    float64   `json:"cost"`
}

// ReadJSONL reads records, one JSON object per line (blank lines skipped):
// {"context": [...], "arm": K, "prob": P, "cost": C}, plus the descriptive
// fields of amt's decision logs (seed, iteration, image, variant,
// violated), which are ignored; any other field is an error. Every record
// must have the same context dimension, an arm >= 0, a probability in
// (0, 1] and a finite cost; errors name the line.
//
// The log is bounded before anything is allocated for it (internal/limits):
// at most limits.LogBytes in all, lines of at most limits.LineBytes,
// arms below limits.Arms and contexts of at most limits.ContextDim values.
func ReadJSONL(r io.Reader) ([]Record, error) {
	var recs []Record
	lr := limits.LineReader(r, "the log", limits.LogBytes, limits.LineBytes)
	sc := bufio.NewScanner(lr)
	sc.Buffer(make([]byte, 0, 64<<10), limits.LineBytes+1)
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(bytes.TrimSpace(b)) == 0 {
			continue
		}
		var raw struct {
			Context []float32 `json:"context"`
			Arm     *int      `json:"arm"`
			Prob    *float64  `json:"prob"`
			Cost    *float64  `json:"cost"`
			// Descriptive fields of amt's decision logs (amt run
			// -log-decisions), accepted and ignored.
			Seed      uint64 `json:"seed"`
			Iteration int    `json:"iteration"`
			Image     int    `json:"image"`
			Variant   string `json:"variant"`
			Violated  bool   `json:"violated"`
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&raw); err != nil {
			if lerr := lr.Err(); lerr != nil {
				return nil, lerr // it names the line
			}
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		switch {
		case raw.Context == nil:
			return nil, fmt.Errorf("line %d: missing \"context\"", line)
		case raw.Arm == nil:
			return nil, fmt.Errorf("line %d: missing \"arm\"", line)
		case raw.Prob == nil:
			return nil, fmt.Errorf("line %d: missing \"prob\"", line)
		case raw.Cost == nil:
			return nil, fmt.Errorf("line %d: missing \"cost\"", line)
		}
		rec := Record{Context: raw.Context, Arm: *raw.Arm, Prob: *raw.Prob, Cost: *raw.Cost}
		if rec.Arm < 0 || rec.Arm >= limits.Arms {
			return nil, fmt.Errorf("line %d: arm %d, want 0 <= arm < %d (limits.Arms)", line, rec.Arm, limits.Arms)
		}
		if len(rec.Context) > limits.ContextDim {
			return nil, fmt.Errorf("line %d: %w", line, &limits.TooLargeError{What: "context", Size: int64(len(rec.Context)), Limit: limits.ContextDim, Unit: "values"})
		}
		if !(rec.Prob > 0 && rec.Prob <= 1) {
			return nil, fmt.Errorf("line %d: prob %v, want 0 < prob <= 1", line, rec.Prob)
		}
		if math.IsNaN(rec.Cost) || math.IsInf(rec.Cost, 0) {
			return nil, fmt.Errorf("line %d: cost %v, want a finite number", line, rec.Cost)
		}
		if len(recs) > 0 && len(rec.Context) != len(recs[0].Context) {
			return nil, fmt.Errorf("line %d: context has %d values, earlier records have %d", line, len(rec.Context), len(recs[0].Context))
		}
		if len(rec.Context) == 0 {
			return nil, fmt.Errorf("line %d: empty context", line)
		}
		recs = append(recs, rec)
	}
	if err := lr.Err(); err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", line+1, err)
	}
	if len(recs) == 0 {
		return nil, errors.New("log has no records")
	}
	return recs, nil
}

// Point is what the estimators need of one logged record.
type Point struct {
	Arm    int       // logged arm
	Prob   float64   // logging probability of Arm
	Cost   float64   // observed cost
	Target []float64 // the evaluated policy's distribution over the arms
	Model  []float64 // a cost model's prediction per arm (DR); nil = 0
}

// Estimate is a policy value (expected cost per decision) with a
// confidence interval.
type Estimate struct {
	Estimator string  `json:"estimator"`
	Value     float64 `json:"value"`
	StdErr    float64 `json:"stderr"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	N         int     `json:"n"`
	// ESS is the effective sample size (Σw)²/Σw² of the importance
	// weights w = π(a|x)/p: far below N means the estimate rests on few
	// records.
	ESS float64 `json:"ess"`
}

// z returns the two-sided normal quantile for a confidence level.
func z(level float64) (float64, error) {
	if !(level > 0 && level < 1) {
		return 0, fmt.Errorf("confidence level %v, want 0 < level < 1", level)
	}
	return math.Sqrt2 * math.Erfinv(level), nil
}

func check(pts []Point) error {
	if len(pts) < 2 {
		return fmt.Errorf("need at least 2 records, have %d", len(pts))
	}
	for i, p := range pts {
		if p.Arm < 0 || p.Arm >= len(p.Target) {
			return fmt.Errorf("record %d: arm %d outside the target distribution's %d arms", i, p.Arm, len(p.Target))
		}
		if !(p.Prob > 0 && p.Prob <= 1) {
			return fmt.Errorf("record %d: probability %v, want 0 < p <= 1", i, p.Prob)
		}
		if p.Model != nil && len(p.Model) != len(p.Target) {
			return fmt.Errorf("record %d: model has %d arms, target %d", i, len(p.Model), len(p.Target))
		}
	}
	return nil
}

func weight(p Point) float64 { return p.Target[p.Arm] / p.Prob }

func ess(pts []Point) float64 {
	s, s2 := 0.0, 0.0
	for _, p := range pts {
		w := weight(p)
		s += w
		s2 += w * w
	}
	if s2 == 0 {
		return 0
	}
	return s * s / s2
}

// meanEstimate is the estimate of the mean of per-record values v.
func meanEstimate(name string, v []float64, level float64) (Estimate, error) {
	zq, err := z(level)
	if err != nil {
		return Estimate{}, err
	}
	n := float64(len(v))
	mean := 0.0
	for _, x := range v {
		mean += x / n
	}
	ss := 0.0
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	se := math.Sqrt(ss / (n - 1) / n)
	return Estimate{Estimator: name, Value: mean, StdErr: se, Lo: mean - zq*se, Hi: mean + zq*se, N: len(v)}, nil
}

// IPS is the inverse propensity score estimate mean(π(a|x)/p · c).
func IPS(pts []Point, level float64) (Estimate, error) {
	if err := check(pts); err != nil {
		return Estimate{}, err
	}
	v := make([]float64, len(pts))
	for i, p := range pts {
		v[i] = weight(p) * p.Cost
	}
	e, err := meanEstimate("ips", v, level)
	e.ESS = ess(pts)
	return e, err
}

// SNIPS is the self-normalised IPS estimate Σ w c / Σ w, with the
// delta-method standard error √Σ(w(c − V))² / Σw.
func SNIPS(pts []Point, level float64) (Estimate, error) {
	if err := check(pts); err != nil {
		return Estimate{}, err
	}
	zq, err := z(level)
	if err != nil {
		return Estimate{}, err
	}
	sw, swc := 0.0, 0.0
	for _, p := range pts {
		w := weight(p)
		sw += w
		swc += w * p.Cost
	}
	e := Estimate{Estimator: "snips", N: len(pts), ESS: ess(pts)}
	if sw == 0 {
		// The target never plays a logged arm: no information.
		e.Value, e.StdErr, e.Lo, e.Hi = math.NaN(), math.Inf(1), math.Inf(-1), math.Inf(1)
		return e, nil
	}
	e.Value = swc / sw
	ss := 0.0
	for _, p := range pts {
		d := weight(p) * (p.Cost - e.Value)
		ss += d * d
	}
	e.StdErr = math.Sqrt(ss) / sw
	e.Lo, e.Hi = e.Value-zq*e.StdErr, e.Value+zq*e.StdErr
	return e, nil
}

// DR is the doubly robust estimate
// mean(Σ_a π(a|x) ĉ(x,a) + π(a_t|x)/p · (c − ĉ(x,a_t))).
func DR(pts []Point, level float64) (Estimate, error) {
	if err := check(pts); err != nil {
		return Estimate{}, err
	}
	v := make([]float64, len(pts))
	for i, p := range pts {
		dm, ca := 0.0, 0.0
		if p.Model != nil {
			for a, q := range p.Target {
				dm += q * p.Model[a]
			}
			ca = p.Model[p.Arm]
		}
		v[i] = dm + weight(p)*(p.Cost-ca)
	}
	e, err := meanEstimate("dr", v, level)
	e.ESS = ess(pts)
	return e, err
}

// Result holds the three estimates of one policy.
type Result struct {
	IPS, SNIPS, DR Estimate
}

// Options configure Evaluate.
type Options struct {
	Arms  int     // number of arms K (> every logged arm)
	Level float64 // confidence level, e.g. 0.95
	Learn bool    // let the policy learn from each record after it is scored
	// ModelHidden is the number of hidden units of DR's cost model (0 =
	// linear); the model is trained progressively, on earlier records
	// only, so each record's DR term uses a model that has not seen it.
	ModelHidden int
	Seed        uint64 // seed of the cost model's initialisation
}

// Evaluate scores policy over the log in order (see the package doc) and
// returns its IPS, SNIPS and DR estimates. It stops with ctx's error when
// ctx is cancelled.
func Evaluate(ctx context.Context, log []Record, policy bandit.Policy, o Options) (Result, error) {
	if len(log) == 0 {
		return Result{}, errors.New("ope: empty log")
	}
	if policy.Arms() != o.Arms {
		return Result{}, fmt.Errorf("ope: policy has %d arms, log evaluation uses %d", policy.Arms(), o.Arms)
	}
	if cells := int64(len(log)) * int64(o.Arms); o.Arms > limits.Arms || cells > limits.OPECells {
		return Result{}, fmt.Errorf("ope: %d records × %d arms: %w", len(log), o.Arms,
			&limits.TooLargeError{What: "the evaluation", Size: cells, Limit: limits.OPECells, Unit: "record-arm cells"})
	}
	if o.ModelHidden < 0 || o.ModelHidden > limits.Hidden {
		return Result{}, fmt.Errorf("ope: cost model with %d hidden units, want 0 to %d", o.ModelHidden, limits.Hidden)
	}
	dim := len(log[0].Context)
	model, err := bandit.NewCostModel(o.Arms, dim, o.ModelHidden, o.Seed)
	if err != nil {
		return Result{}, err
	}
	pts := make([]Point, len(log))
	for i, r := range log {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return Result{}, err
			}
		}
		if r.Arm < 0 || r.Arm >= o.Arms {
			return Result{}, fmt.Errorf("ope: record %d: arm %d, want 0 <= arm < %d", i, r.Arm, o.Arms)
		}
		target, err := policy.Distribution(r.Context)
		if err != nil {
			return Result{}, fmt.Errorf("ope: record %d: %w", i, err)
		}
		pred := make([]float64, o.Arms)
		if err := model.Predict(r.Context, pred); err != nil {
			return Result{}, fmt.Errorf("ope: record %d: %w", i, err)
		}
		pts[i] = Point{Arm: r.Arm, Prob: r.Prob, Cost: r.Cost, Target: target, Model: pred}
		if err := model.Learn(r.Context, r.Arm, r.Cost, 1); err != nil {
			return Result{}, fmt.Errorf("ope: record %d: %w", i, err)
		}
		if o.Learn {
			if err := policy.Learn(r.Context, r.Arm, r.Prob, r.Cost); err != nil {
				return Result{}, fmt.Errorf("ope: record %d: %w", i, err)
			}
		}
	}
	var res Result
	if res.IPS, err = IPS(pts, o.Level); err != nil {
		return res, fmt.Errorf("ope: %w", err)
	}
	if res.SNIPS, err = SNIPS(pts, o.Level); err != nil {
		return res, fmt.Errorf("ope: %w", err)
	}
	if res.DR, err = DR(pts, o.Level); err != nil {
		return res, fmt.Errorf("ope: %w", err)
	}
	return res, nil
}
