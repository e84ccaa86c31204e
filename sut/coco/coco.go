// Package coco evaluates object detections the way pycocotools' COCOeval
// does for iouType "bbox": AP averaged over IoU thresholds 0.50:0.05:0.95,
// area range "all", at most 100 detections per category, 101-point
// interpolated precision, crowd regions handled as COCO does.
//
// It reproduces pycocotools 2.0 bit for bit, including its floating-point
// details: precision is tp/(tp+fp+ε) with ε = 2⁻⁵² (np.spacing(1)), so a
// perfect AP is 0.9999999999999998, and the final mean is numpy's pairwise
// sum over blocks of 8192 values. These details decide the verdict of
// metamorphic tests whose AP drop lies exactly on the threshold.
//
// EvaluateImage scores one image (Tetraband's per-image AP, the value the
// detection verdict compares); Evaluator accumulates many images into the
// dataset-level COCO statistics used to report a detector's accuracy.
//
// Two deliberate differences from pycocotools, both only for inputs COCO
// data never contain: a detection matched to a ground-truth annotation whose
// id is 0 still counts as matched (pycocotools stores matches as ids and
// tests them against 0), and non-finite scores or boxes are rejected with an
// error instead of being sorted arbitrarily.
package coco

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/amt-dev/amt/rgb"
)

// Annotation is one ground-truth object of an image.
type Annotation struct {
	// ID is the annotation id (informational; order, not id, drives matching).
	ID int64
	// CategoryID is the COCO category id (1…90 for COCO's 80 classes).
	CategoryID int
	// Box is the object's [x, y, w, h] box in image pixels.
	Box rgb.Box
	// Area is COCO's "area" field (the segmentation area). It only decides
	// whether the annotation lies inside Params.AreaRange; for the default
	// range "all" any value in [0, 1e10], including the zero value, counts.
	Area float64
	// IsCrowd marks a crowd region: detections inside it are neither true
	// nor false positives, and its IoU is intersection over detection area.
	IsCrowd bool
}

// Detection is one detected object: category, confidence and box.
type Detection struct {
	// CategoryID is the COCO category id.
	CategoryID int
	// Score is the detection confidence; higher ranks first.
	Score float64
	// Box is the [x, y, w, h] box in image pixels.
	Box rgb.Box
}

// Params are the evaluation parameters. DefaultParams returns COCO's.
type Params struct {
	// IoUThresholds are the IoU thresholds AP is averaged over.
	IoUThresholds []float64
	// RecallThresholds are the recall points precision is sampled at.
	RecallThresholds []float64
	// MaxDetections is the number of highest-scoring detections per image
	// and category that are evaluated.
	MaxDetections int
	// AreaRange is the [min, max] object area evaluated; detections and
	// ground truth outside it are ignored as COCO does.
	AreaRange [2]float64
}

// DefaultParams returns pycocotools' default bbox parameters for the
// summary statistic stats[0]: IoU thresholds numpy.linspace(.5, .95, 10),
// recall thresholds numpy.linspace(0, 1, 101), 100 detections, area "all"
// ([0, 1e10]). The thresholds are computed exactly as numpy does, so
// IoUThresholds[8] is 0.8999999999999999.
func DefaultParams() Params {
	return Params{
		IoUThresholds:    Linspace(0.5, 0.95, 10),
		RecallThresholds: Linspace(0, 1, 101),
		MaxDetections:    100,
		AreaRange:        [2]float64{0, 1e10},
	}
}

// Linspace returns numpy.linspace(start, stop, num) bit for bit:
// element i is i·((stop−start)/(num−1)) + start and the last is stop.
func Linspace(start, stop float64, num int) []float64 {
	if num <= 0 {
		return nil
	}
	if num == 1 {
		return []float64{start}
	}
	step := (stop - start) / float64(num-1)
	out := make([]float64, num)
	for i := range out {
		out[i] = float64(i)*step + start
	}
	out[num-1] = stop
	return out
}

// Validate reports whether p can be used for evaluation.
func (p Params) Validate() error {
	if len(p.IoUThresholds) == 0 {
		return errors.New("coco: Params.IoUThresholds is empty")
	}
	for i, t := range p.IoUThresholds {
		if !(t >= 0 && t <= 1) {
			return fmt.Errorf("coco: Params.IoUThresholds[%d] = %v, want a value in [0, 1]", i, t)
		}
	}
	if len(p.RecallThresholds) == 0 {
		return errors.New("coco: Params.RecallThresholds is empty")
	}
	for i, r := range p.RecallThresholds {
		if !(r >= 0 && r <= 1) {
			return fmt.Errorf("coco: Params.RecallThresholds[%d] = %v, want a value in [0, 1]", i, r)
		}
		if i > 0 && r < p.RecallThresholds[i-1] {
			return fmt.Errorf("coco: Params.RecallThresholds[%d] = %v is below the previous value %v; want ascending thresholds", i, r, p.RecallThresholds[i-1])
		}
	}
	if p.MaxDetections <= 0 {
		return fmt.Errorf("coco: Params.MaxDetections = %d, want > 0", p.MaxDetections)
	}
	if math.IsNaN(p.AreaRange[0]) || math.IsNaN(p.AreaRange[1]) || p.AreaRange[0] > p.AreaRange[1] {
		return fmt.Errorf("coco: Params.AreaRange = %v, want [min, max] with min ≤ max", p.AreaRange)
	}
	return nil
}

// Stats are COCO summary statistics for area "all" at MaxDetections.
// A value is −1 when no category has non-crowd ground truth (for a single
// image: the image has no annotations), or, for AP50/AP75, when 0.5/0.75 is
// not among the IoU thresholds.
type Stats struct {
	// AP is stats[0]: precision averaged over IoU thresholds, recall
	// thresholds and evaluated categories. This is the per-image "mAP" of
	// Tetraband's verdict.
	AP float64
	// AP50 is stats[1], AP at IoU 0.5.
	AP50 float64
	// AP75 is stats[2], AP at IoU 0.75.
	AP75 float64
}

// ImageAP returns the per-image AP@[.5:.95] (stats[0] with DefaultParams)
// of dets against gt: −1 if gt is empty. Detections are taken in the given
// order (ties in score keep it).
func ImageAP(gt []Annotation, dets []Detection) (float64, error) {
	s, err := EvaluateImage(gt, dets, DefaultParams())
	return s.AP, err
}

// EvaluateImage evaluates the detections of one image against its ground
// truth, as pycocotools does for a COCO object holding that single image.
// Every category with non-crowd ground truth is evaluated; detections of
// other categories cost nothing.
func EvaluateImage(gt []Annotation, dets []Detection, p Params) (Stats, error) {
	e, err := NewEvaluator(p)
	if err != nil {
		return Stats{}, err
	}
	if err := e.Add(0, gt, dets); err != nil {
		return Stats{}, err
	}
	return e.Stats(), nil
}

// Evaluator accumulates images for dataset-level COCO evaluation
// (COCOeval.evaluate + accumulate + summarize over many images). The zero
// value is not usable; call NewEvaluator. An Evaluator is not safe for
// concurrent use.
type Evaluator struct {
	p Params
	// per category id: per image id: evaluation of that pair.
	evals map[int]map[int]*imgCatEval
	seen  map[int]bool
}

// NewEvaluator returns an empty Evaluator with parameters p.
func NewEvaluator(p Params) (*Evaluator, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Evaluator{p: p, evals: map[int]map[int]*imgCatEval{}, seen: map[int]bool{}}, nil
}

// Add evaluates one image. Each image id may be added once; images are
// accumulated in ascending id order whatever the order of the calls, as
// pycocotools sorts its image ids.
func (e *Evaluator) Add(imageID int, gt []Annotation, dets []Detection) error {
	if e.seen[imageID] {
		return fmt.Errorf("coco: image %d added twice", imageID)
	}
	for i, g := range gt {
		if err := checkBox(g.Box); err != nil {
			return fmt.Errorf("coco: image %d: annotation %d (id %d): %w", imageID, i, g.ID, err)
		}
		if math.IsNaN(g.Area) {
			return fmt.Errorf("coco: image %d: annotation %d (id %d): area is NaN", imageID, i, g.ID)
		}
	}
	for i, d := range dets {
		if err := checkBox(d.Box); err != nil {
			return fmt.Errorf("coco: image %d: detection %d: %w", imageID, i, err)
		}
		if math.IsNaN(d.Score) || math.IsInf(d.Score, 0) {
			return fmt.Errorf("coco: image %d: detection %d: score %v is not finite", imageID, i, d.Score)
		}
	}
	e.seen[imageID] = true
	gtBy := map[int][]Annotation{}
	dtBy := map[int][]Detection{}
	for _, g := range gt {
		gtBy[g.CategoryID] = append(gtBy[g.CategoryID], g)
	}
	for _, d := range dets {
		dtBy[d.CategoryID] = append(dtBy[d.CategoryID], d)
	}
	cats := map[int]bool{}
	for c := range gtBy {
		cats[c] = true
	}
	for c := range dtBy {
		cats[c] = true
	}
	for c := range cats {
		ev := evaluateImgCat(gtBy[c], dtBy[c], &e.p)
		m := e.evals[c]
		if m == nil {
			m = map[int]*imgCatEval{}
			e.evals[c] = m
		}
		m[imageID] = ev
	}
	return nil
}

func checkBox(b rgb.Box) error {
	for _, v := range [4]float64{b.X, b.Y, b.W, b.H} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("box %v is not finite", b)
		}
	}
	return nil
}

// imgCatEval is pycocotools' evaluateImg result for one image and category.
type imgCatEval struct {
	scores   []float64 // detections' scores, sorted descending, ≤ MaxDetections
	matched  [][]bool  // [threshold][detection]: matched to some GT
	ignored  [][]bool  // [threshold][detection]: ignored (matched to crowd, or out of area range)
	nonIgnGT int       // number of GT not ignored (non-crowd, in area range)
}

// evaluateImgCat follows COCOeval.evaluateImg for one image and category.
func evaluateImgCat(gt []Annotation, dt []Detection, p *Params) *imgCatEval {
	// Ground truth: ignore flag, then non-ignored first (stable).
	type g struct {
		box    rgb.Box
		ignore bool
		crowd  bool
	}
	gs := make([]g, 0, len(gt))
	for pass := 0; pass < 2; pass++ {
		for _, a := range gt {
			ign := a.IsCrowd || a.Area < p.AreaRange[0] || a.Area > p.AreaRange[1]
			if ign == (pass == 1) {
				gs = append(gs, g{box: a.Box, ignore: ign, crowd: a.IsCrowd})
			}
		}
	}
	// Detections: stable sort by descending score, keep MaxDetections.
	ds := slices.Clone(dt)
	slices.SortStableFunc(ds, func(a, b Detection) int { return descending(a.Score, b.Score) })
	if len(ds) > p.MaxDetections {
		ds = ds[:p.MaxDetections]
	}
	T, D, G := len(p.IoUThresholds), len(ds), len(gs)
	ev := &imgCatEval{
		scores:  make([]float64, D),
		matched: make([][]bool, T),
		ignored: make([][]bool, T),
	}
	for i, d := range ds {
		ev.scores[i] = d.Score
	}
	for _, x := range gs {
		if !x.ignore {
			ev.nonIgnGT++
		}
	}
	ious := make([]float64, D*G)
	for i, d := range ds {
		for j, x := range gs {
			ious[i*G+j] = IoU(d.Box, x.box, x.crowd)
		}
	}
	gtMatched := make([]bool, G)
	for t, thr := range p.IoUThresholds {
		matched := make([]bool, D)
		ignored := make([]bool, D)
		clear(gtMatched)
		if G > 0 {
			for i := range ds {
				best := math.Min(thr, 1-1e-10)
				m := -1
				for j := range gs {
					if gtMatched[j] && !gs[j].crowd {
						continue
					}
					if m > -1 && !gs[m].ignore && gs[j].ignore {
						break
					}
					if ious[i*G+j] < best {
						continue
					}
					best = ious[i*G+j]
					m = j
				}
				if m == -1 {
					continue
				}
				ignored[i] = gs[m].ignore
				matched[i] = true
				gtMatched[m] = true
			}
		}
		// Unmatched detections outside the area range are ignored.
		for i, d := range ds {
			a := d.Box.W * d.Box.H
			if !matched[i] && (a < p.AreaRange[0] || a > p.AreaRange[1]) {
				ignored[i] = true
			}
		}
		ev.matched[t] = matched
		ev.ignored[t] = ignored
	}
	return ev
}

// IoU returns the intersection over union of a detection box d and a
// ground-truth box g as pycocotools' bbox IoU computes it: float64, no +1,
// and for a crowd g the intersection over d's own area.
func IoU(d, g rgb.Box, crowd bool) float64 {
	w := math.Min(d.W+d.X, g.W+g.X) - math.Max(d.X, g.X)
	if w <= 0 {
		return 0
	}
	h := math.Min(d.H+d.Y, g.H+g.Y) - math.Max(d.Y, g.Y)
	if h <= 0 {
		return 0
	}
	i := w * h
	da := d.W * d.H
	var u float64
	if crowd {
		u = da
	} else {
		u = da + g.W*g.H - i
	}
	return i / u
}

// Stats returns the summary statistics over all images added so far
// (COCOeval.accumulate + summarize, area "all", MaxDetections).
func (e *Evaluator) Stats() Stats {
	p := &e.p
	T, R := len(p.IoUThresholds), len(p.RecallThresholds)
	cats := make([]int, 0, len(e.evals))
	for c := range e.evals {
		cats = append(cats, c)
	}
	slices.Sort(cats)
	// precision[k] holds the [T][R] values of the k-th evaluated category.
	var precision [][]float64
	for _, c := range cats {
		q, ok := e.accumulateCat(e.evals[c])
		if ok {
			precision = append(precision, q)
		}
	}
	K := len(precision)
	if K == 0 {
		return Stats{AP: -1, AP50: -1, AP75: -1}
	}
	// C order over [t][r][k].
	meanOver := func(ts []int) float64 {
		vals := make([]float64, 0, len(ts)*R*K)
		for _, t := range ts {
			for r := 0; r < R; r++ {
				for k := 0; k < K; k++ {
					vals = append(vals, precision[k][t*R+r])
				}
			}
		}
		return Mean(vals)
	}
	all := make([]int, T)
	for t := range all {
		all[t] = t
	}
	s := Stats{AP: meanOver(all), AP50: -1, AP75: -1}
	for t, thr := range p.IoUThresholds {
		if thr == 0.5 {
			s.AP50 = meanOver([]int{t})
		}
		if thr == 0.75 {
			s.AP75 = meanOver([]int{t})
		}
	}
	return s
}

// accumulateCat follows COCOeval.accumulate for one category (area "all",
// MaxDetections): it returns the [T][R] interpolated precision, or false
// when the category has no non-ignored ground truth (pycocotools leaves
// its precision at −1 and the mean skips it).
func (e *Evaluator) accumulateCat(byImage map[int]*imgCatEval) ([]float64, bool) {
	p := &e.p
	ids := make([]int, 0, len(byImage))
	for id := range byImage {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	npig := 0
	n := 0
	for _, id := range ids {
		npig += byImage[id].nonIgnGT
		n += len(byImage[id].scores)
	}
	if npig == 0 {
		return nil, false
	}
	// Concatenate in image order, then stable sort by descending score.
	type ref struct {
		ev    *imgCatEval
		i     int
		score float64
	}
	refs := make([]ref, 0, n)
	for _, id := range ids {
		ev := byImage[id]
		for i, s := range ev.scores {
			refs = append(refs, ref{ev, i, s})
		}
	}
	slices.SortStableFunc(refs, func(a, b ref) int { return descending(a.score, b.score) })
	T, R := len(p.IoUThresholds), len(p.RecallThresholds)
	out := make([]float64, T*R)
	rc := make([]float64, n)
	pr := make([]float64, n)
	eps := math.Nextafter(1, 2) - 1 // np.spacing(1)
	for t := 0; t < T; t++ {
		var tp, fp float64
		for j, r := range refs {
			if !r.ev.ignored[t][r.i] {
				if r.ev.matched[t][r.i] {
					tp++
				} else {
					fp++
				}
			}
			rc[j] = tp / float64(npig)
			pr[j] = tp / (fp + tp + eps)
		}
		for j := n - 1; j > 0; j-- {
			if pr[j] > pr[j-1] {
				pr[j-1] = pr[j]
			}
		}
		q := out[t*R : (t+1)*R]
		j := 0
		for ri, thr := range p.RecallThresholds {
			// searchsorted(rc, thr, side="left"); thresholds ascend.
			for j < n && rc[j] < thr {
				j++
			}
			if j >= n {
				break // q stays 0 from here on
			}
			q[ri] = pr[j]
		}
	}
	return out, true
}

// Mean returns numpy.mean(x) for a contiguous float64 array bit for bit:
// numpy's pairwise summation applied to consecutive blocks of 8192 values
// (its buffer size), the block sums added in order to 0.0, divided by
// len(x). It returns NaN for an empty slice.
func Mean(x []float64) float64 {
	return Sum(x) / float64(len(x))
}

// Sum returns numpy.add.reduce(x) for a contiguous float64 array bit for
// bit (see Mean).
func Sum(x []float64) float64 {
	const block = 8192
	total := 0.0
	for len(x) > 0 {
		n := min(len(x), block)
		total += pairwiseSum(x[:n])
		x = x[n:]
	}
	return total
}

// pairwiseSum is numpy's pairwise_sum_DOUBLE.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	switch {
	case n < 8:
		res := 0.0
		for _, v := range a {
			res += v
		}
		return res
	case n <= 128:
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			r[0] += a[i]
			r[1] += a[i+1]
			r[2] += a[i+2]
			r[3] += a[i+3]
			r[4] += a[i+4]
			r[5] += a[i+5]
			r[6] += a[i+6]
			r[7] += a[i+7]
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	default:
		n2 := n / 2
		n2 -= n2 % 8
		return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
	}
}

// descending orders scores from the highest to the lowest; equal scores
// (and NaNs) compare equal, so a stable sort keeps their order.
func descending(a, b float64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}
