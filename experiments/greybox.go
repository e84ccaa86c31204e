package experiments

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/sut"
)

// The grey-box context block (features.kind sut): what the system under
// test itself answered on the source image, appended after the other
// context features. An agent learns from it which images the SUT is
// unsure about, a strong hint of which follow-ups will change its answer.
// The sweep computes the block with one SUT inference per source image
// and caches it in a table of its own (namespace "sut", keyed by the
// verdict cache's key), so the verdict cache — and every table and
// result without the block — is the same as without it; the online envs
// compute the same values from the source prediction (a batch of one)
// with the functions below, so replay and online runs see identical
// contexts.
//
// The block is the research result of issue #13 (its grey-box context):
//
//   - classification: the softmax of the source image's logits (one
//     probability per class, computed in float64 from the logits minus
//     their maximum) and the top-1 minus top-2 logit margin, classes + 1
//     values;
//   - detection: a summary of the source image's detections, 7 values (see
//     detectionSutFeatures).

// classSutFeatures returns the grey-box block of a classifier's answer:
// softmax(logits) and the top-1 − top-2 logit margin (0 for one class).
// It fails on an empty or non-finite answer.
func classSutFeatures(logits []float32) ([]float32, error) {
	if len(logits) == 0 {
		return nil, fmt.Errorf("sut features: the classifier returned no logits")
	}
	best := 0
	for i, v := range logits {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("sut features: logit %d is %v", i, v)
		}
		if v > logits[best] {
			best = i
		}
	}
	top := logits[best]
	second := float32(math.Inf(-1))
	sum := 0.0
	for i, v := range logits {
		sum += math.Exp(float64(v - top))
		if i != best && v > second {
			second = v
		}
	}
	out := make([]float32, len(logits)+1)
	for i, v := range logits {
		out[i] = float32(math.Exp(float64(v-top)) / sum)
	}
	if len(logits) > 1 {
		out[len(logits)] = top - second
	}
	return out, nil
}

// detectionSutDim is the length of detectionSutFeatures's block.
const detectionSutDim = 7

// detectionSutFeatures returns the grey-box block of a detector's answer on
// a w×h source image (its detections in image pixels):
//
//  0. the number of detections scoring ≥ 0.5,
//  1. the number scoring ≥ 0.25,
//  2. the highest score (0 without detections),
//  3. the sum of the 5 highest scores / 5 (missing ones count 0),
//  4. the number of distinct categories among those scoring ≥ 0.25,
//  5. the mean box area, as a fraction of the image, of those scoring
//     ≥ 0.25 (0 when there are none),
//  6. log(1 + the number scoring ≥ 0.05).
func detectionSutFeatures(dets []sut.Detection, w, h int) ([]float32, error) {
	if w < 1 || h < 1 {
		return nil, fmt.Errorf("sut features: image size %d×%d", w, h)
	}
	scores := make([]float64, len(dets))
	var n50, n25, n05 int
	area := 0.0
	cats := map[int]bool{}
	for i, d := range dets {
		if math.IsNaN(d.Score) || math.IsInf(d.Score, 0) {
			return nil, fmt.Errorf("sut features: detection %d has score %v", i, d.Score)
		}
		scores[i] = d.Score
		if d.Score >= 0.5 {
			n50++
		}
		if d.Score >= 0.25 {
			n25++
			cats[d.CategoryID] = true
			area += d.Box.W * d.Box.H / float64(w*h)
		}
		if d.Score >= 0.05 {
			n05++
		}
	}
	slices.SortFunc(scores, func(a, b float64) int { return cmp.Compare(b, a) })
	top, top5 := 0.0, 0.0
	if len(scores) > 0 {
		top = scores[0]
	}
	for _, s := range scores[:min(5, len(scores))] {
		top5 += s / 5
	}
	if n25 > 0 {
		area /= float64(n25)
	}
	out := []float32{float32(n50), float32(n25), float32(top), float32(top5), float32(len(cats)), float32(area), float32(math.Log1p(float64(n05)))}
	for i, v := range out {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("sut features: value %d is %v", i, v)
		}
	}
	return out, nil
}

// SutFeatures returns every image's grey-box block (images × dim,
// row-major) and dim. It fails if the sweep did not compute the blocks
// (features.kind without sut; amt sweep -sut-features asks for them).
func (t *Table) SutFeatures() ([]float32, int, error) {
	if t.sut == nil {
		return nil, 0, fmt.Errorf("sut features: the sweep did not compute the grey-box blocks")
	}
	return t.sut, t.sutDim, nil
}

// contexts returns the context matrix of the table's images (the
// extractor's features, then with sut the grey-box block) and its layout.
func (t *Table) contexts(sut bool) ([]float32, bandit.Layout, error) {
	if !sut {
		return t.Features, bandit.Layout{Dim: t.Dim}, nil
	}
	g, gd, err := t.SutFeatures()
	if err != nil {
		return nil, bandit.Layout{}, err
	}
	return ConcatRows(t.Features, t.Dim, g, gd, t.Images), bandit.Layout{Dim: t.Dim + gd, Grey: gd}, nil
}

// ConcatRows returns the rows of a (n × da) followed by those of b (n ×
// db), side by side: n × (da + db), as amt replay appends the grey-box
// block to the features.
func ConcatRows(a []float32, da int, b []float32, db int, n int) []float32 {
	out := make([]float32, 0, n*(da+db))
	for i := 0; i < n; i++ {
		out = append(out, a[i*da:(i+1)*da]...)
		out = append(out, b[i*db:(i+1)*db]...)
	}
	return out
}
