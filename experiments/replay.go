package experiments

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/scenario"
)

// ReplayEnv answers the loop from a precomputed verdict table and a
// context-feature matrix, so agents can be compared in seconds instead of
// re-running the system under test.
type ReplayEnv struct {
	images, dim int
	features    []float32 // images × dim
	index       map[string]int
	outcomes    []Outcome // images × variants of the scenario
	nvar        int
}

// NewReplayEnv checks a verdict table and a feature matrix against a
// scenario and returns an Env over them. The table must hold exactly one
// row for every image 0..images-1 and every follow-up of the scenario
// (other rows are ignored, duplicates are an error), where images is the
// feature matrix's row count (len(features)/dim). Features must be finite.
// Every problem is reported before any run starts.
func NewReplayEnv(rows []record.Verdict, features []float32, dim int, sc scenario.Scenario) (*ReplayEnv, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	if dim < 0 || (dim == 0 && len(features) != 0) || (dim > 0 && len(features)%dim != 0) {
		return nil, fmt.Errorf("replay: %d feature values do not divide into rows of %d", len(features), dim)
	}
	images := 0
	for _, r := range rows {
		if r.Image+1 > images {
			images = r.Image + 1
		}
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
	e := &ReplayEnv{images: images, dim: dim, features: features, index: map[string]int{}, nvar: len(vars)}
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
	o := Outcome{Violated: r.Violation}
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

// Dim implements Env.
func (e *ReplayEnv) Dim() int { return e.dim }

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

// ReadFeatures reads a raw little-endian float32 matrix (the format of
// `amt sweep -features`). With dim > 0 the file must hold whole rows of dim
// values; with dim == 0 it must hold whole rows for rows images, and dim is
// derived. It returns the values and dim.
func ReadFeatures(path string, rows, dim int) ([]float32, int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, fmt.Errorf("features: %w", err)
	}
	if len(b)%4 != 0 {
		return nil, 0, fmt.Errorf("features: %s holds %d bytes, not a whole number of float32 values", path, len(b))
	}
	n := len(b) / 4
	switch {
	case dim > 0:
		if n%dim != 0 {
			return nil, 0, fmt.Errorf("features: %s holds %d float32 values, not a whole number of rows of %d", path, n, dim)
		}
		if rows > 0 && n/dim != rows {
			return nil, 0, fmt.Errorf("features: %s holds %d rows of %d, but the verdict table has %d images", path, n/dim, dim, rows)
		}
	case rows > 0:
		if n%rows != 0 {
			return nil, 0, fmt.Errorf("features: %s holds %d float32 values, which do not divide into %d rows (one per image of the verdict table)", path, n, rows)
		}
		dim = n / rows
	default:
		return nil, 0, fmt.Errorf("features: %s: need the number of rows or the dimension", path)
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out, dim, nil
}

// EncodeFeatures returns the raw little-endian float32 bytes of a matrix.
func EncodeFeatures(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, v := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}
