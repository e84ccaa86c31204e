package experiments

import (
	"context"
	"fmt"
	"math"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// ReplayEnv answers the loop from a precomputed verdict table and a
// context-feature matrix, so agents can be compared in seconds instead of
// re-running the system under test.
type ReplayEnv struct {
	images, dim int
	layout      bandit.Layout
	features    []float32 // images × dim
	index       map[string]int
	outcomes    []Outcome // images × variants of the scenario
	nvar        int
}

// NewReplayEnv checks a verdict table and a context matrix against a
// scenario and returns an Env over them. The matrix has rows of
// layout.Dim values, the last layout.Grey of which are the grey-box block.
// The table must hold exactly one row for every image 0..images-1 and
// every follow-up of the scenario (other rows are ignored, duplicates are
// an error), where images is the matrix's row count (len(features)/dim).
// Features must be finite. Every problem is reported before any run
// starts.
func NewReplayEnv(rows []record.Verdict, features []float32, layout bandit.Layout, sc scenario.Scenario) (*ReplayEnv, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	dim := layout.Dim
	if layout.Grey < 0 || layout.Grey > dim {
		return nil, fmt.Errorf("replay: a grey-box block of %d of the %d context values", layout.Grey, dim)
	}
	if dim < 0 || (dim == 0 && len(features) != 0) || (dim > 0 && len(features)%dim != 0) {
		return nil, fmt.Errorf("replay: %d feature values do not divide into rows of %d", len(features), dim)
	}
	images := 0
	for _, r := range rows {
		if r.Image < 0 || r.Image > record.MaxImage {
			return nil, fmt.Errorf("replay: verdict table row of image %d: want an image index in [0, %d]", r.Image, record.MaxImage)
		}
		if r.Image+1 > images {
			images = r.Image + 1
		}
	}
	// Every image needs its rows: checked before allocating the outcomes,
	// so an image index far beyond the table's rows costs nothing.
	if images > len(rows) {
		return nil, fmt.Errorf("replay: the verdict table covers images 0..%d but has only %d rows", images-1, len(rows))
	}
	if dim > 0 && len(features)/dim != images {
		return nil, fmt.Errorf("replay: the feature matrix has %d rows but the verdict table covers images 0..%d (%d images)", len(features)/dim, images-1, images)
	}
	for i, f := range features {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return nil, fmt.Errorf("replay: feature row %d (image %d), column %d is %v; features must be finite", i/dim, i/dim, i%dim, f)
		}
	}
	vars := sc.Variants()
	e := &ReplayEnv{images: images, dim: dim, layout: layout, features: features, index: map[string]int{}, nvar: len(vars)}
	for j, v := range vars {
		e.index[v.Key()] = j
	}
	e.outcomes = make([]Outcome, images*len(vars))
	seen := make([]bool, len(e.outcomes))
	for _, r := range rows {
		j, ok := e.index[r.ParamKey()]
		if !ok {
			continue
		}
		k := r.Image*len(vars) + j
		if seen[k] {
			return nil, fmt.Errorf("replay: verdict table has two rows for image %d, %s", r.Image, r.ParamKey())
		}
		seen[k] = true
		e.outcomes[k] = outcomeOf(r)
	}
	missing, first := 0, -1
	for k, ok := range seen {
		if !ok {
			if first < 0 {
				first = k
			}
			missing++
		}
	}
	if missing > 0 {
		return nil, fmt.Errorf("replay: verdict table lacks %d of the %d rows scenario %s needs over images 0..%d, first image %d, %s",
			missing, len(seen), sc.Name, images-1, first/len(vars), vars[first%len(vars)].Key())
	}
	return e, nil
}

// outcomeOf turns a table row into an Outcome: classification scores are
// 1 when the prediction equals a known label; detection scores are the
// per-image mAPs.
func outcomeOf(r record.Verdict) Outcome {
	o := Outcome{Violated: r.Violation, PredOriginal: r.PredOriginal, PredModified: r.PredTransformed, Label: r.Label}
	if !math.IsNaN(r.MapOriginal) {
		o.OriginalScore, o.ModifiedScore = r.MapOriginal, r.MapTransformed
		return o
	}
	if r.Label >= 0 {
		if r.PredOriginal == r.Label {
			o.OriginalScore = 1
		}
		if r.PredTransformed == r.Label {
			o.ModifiedScore = 1
		}
	}
	return o
}

// Len implements Env.
func (e *ReplayEnv) Len() int { return e.images }

// Layout implements Env.
func (e *ReplayEnv) Layout() bandit.Layout { return e.layout }

// Load implements Env: the table is in memory, so it only checks the index.
func (e *ReplayEnv) Load(_ context.Context, image int) error {
	if image < 0 || image >= e.images {
		return fmt.Errorf("replay: image %d out of range [0,%d)", image, e.images)
	}
	return nil
}

// Context implements Env: row image of the feature matrix.
func (e *ReplayEnv) Context(_ context.Context, image int) ([]float32, error) {
	if image < 0 || image >= e.images {
		return nil, fmt.Errorf("replay: image %d out of range [0,%d)", image, e.images)
	}
	return e.features[image*e.dim : (image+1)*e.dim : (image+1)*e.dim], nil
}

// Evaluate implements Env: the table's verdict.
func (e *ReplayEnv) Evaluate(_ context.Context, image int, v scenario.Variant) (Outcome, error) {
	j, ok := e.index[v.Key()]
	if !ok || image < 0 || image >= e.images {
		return Outcome{}, fmt.Errorf("replay: no verdict for image %d, %s", image, v.Key())
	}
	return e.outcomes[image*e.nvar+j], nil
}
