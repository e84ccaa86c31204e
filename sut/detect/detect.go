// Package detect turns the raw output tensors of a single-stage object
// detector into COCO detections: a Decoder produces scored (box, class)
// candidates in network-input pixels, and Postprocess applies per-class
// non-maximum suppression, keeps the top detections, undoes the input
// letterbox and clips to the image.
//
// YOLO is the decoder for YOLOv3-style heads (yolov3-tiny is YOLOv3Tiny);
// other detectors plug in by implementing Decoder. The defaults reproduce
// the reference pipeline of shared/golden/detection/README.md §2.6–2.7.
//
// The package works on plain float32 slices, so it depends on no inference
// engine.
package detect

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/amt-dev/amt/sut/coco"
)

// Head is one raw output tensor of a detector for a single image, in the
// model's layout (for YOLO: [1, anchors·(5+classes), gridH, gridW]).
type Head struct {
	// Name is the graph output's name (for error messages).
	Name string
	// Shape is the tensor's shape.
	Shape []int
	// Data holds the values in row-major order; len(Data) is the product of Shape.
	Data []float32
}

// Candidate is one scored (box, class) pair from a Decoder: a corner box
// in network-input pixels.
type Candidate struct {
	X1, Y1, X2, Y2 float64
	// Class is the class index (0-based, the model's output order).
	Class int
	// Score is the detection confidence.
	Score float64
}

// Decoder decodes a detector's raw heads into candidates.
type Decoder interface {
	// Decode appends to dst every (box, class) pair whose score is at
	// least minScore, in the decoder's candidate order (box by box, and
	// classes ascending within a box); NMS ties are broken by this order.
	// It returns an error if the heads do not have the expected shapes.
	Decode(dst []Candidate, heads []Head, minScore float64) ([]Candidate, error)
	// NumClasses returns the number of classes the model predicts.
	NumClasses() int
}

// Config holds the post-processing parameters.
type Config struct {
	// ScoreThreshold is the minimum score a (box, class) pair needs to be
	// kept (inclusive).
	ScoreThreshold float64
	// IoUThreshold: NMS suppresses a box whose IoU with a kept box of the
	// same class is strictly greater.
	IoUThreshold float64
	// MaxDetections is the number of highest-scoring detections kept per image.
	MaxDetections int
}

// DefaultConfig returns the reference pipeline's parameters: score ≥ 0.005,
// NMS IoU > 0.45, top 100.
func DefaultConfig() Config {
	return Config{ScoreThreshold: 0.005, IoUThreshold: 0.45, MaxDetections: 100}
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	if !(c.ScoreThreshold >= 0 && c.ScoreThreshold <= 1) {
		return fmt.Errorf("detect: ScoreThreshold = %v, want a value in [0, 1]", c.ScoreThreshold)
	}
	if !(c.IoUThreshold >= 0 && c.IoUThreshold <= 1) {
		return fmt.Errorf("detect: IoUThreshold = %v, want a value in [0, 1]", c.IoUThreshold)
	}
	if c.MaxDetections <= 0 {
		return fmt.Errorf("detect: MaxDetections = %d, want > 0", c.MaxDetections)
	}
	return nil
}

// Geometry maps network-input pixels back to original-image pixels:
// X = (x − DX)/ScaleX and Y = (y − DY)/ScaleY, then clipped to [0, W] and
// [0, H]. For a letterbox (nn/preprocess.Geometry), ScaleX = ScaleY = r
// and (DX, DY) is the padding.
type Geometry struct {
	// W and H are the original image's size.
	W, H int
	// DX and DY are the offsets of the image inside the network input.
	DX, DY float64
	// ScaleX and ScaleY are network-input pixels per original pixel.
	ScaleX, ScaleY float64
}

// Validate reports whether g is usable.
func (g Geometry) Validate() error {
	if g.W <= 0 || g.H <= 0 {
		return fmt.Errorf("detect: Geometry image size %dx%d, want positive", g.W, g.H)
	}
	if !(g.ScaleX > 0) || !(g.ScaleY > 0) || math.IsInf(g.ScaleX, 0) || math.IsInf(g.ScaleY, 0) {
		return fmt.Errorf("detect: Geometry scale (%v, %v), want positive and finite", g.ScaleX, g.ScaleY)
	}
	if math.IsNaN(g.DX) || math.IsNaN(g.DY) || math.IsInf(g.DX, 0) || math.IsInf(g.DY, 0) {
		return fmt.Errorf("detect: Geometry offset (%v, %v) is not finite", g.DX, g.DY)
	}
	return nil
}

// COCOCategoryIDs returns the COCO category id of each of the 80 class
// indices of COCO-trained detectors (the usual coco.names order): the
// category ids 1…90 in ascending order, without COCO's gaps.
func COCOCategoryIDs() []int {
	return []int{
		1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21,
		22, 23, 24, 25, 27, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44,
		46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65,
		67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90,
	}
}

// Postprocess turns decoded candidates into detections (README §2.7):
//  1. per class (ascending), the candidates with score ≥ ScoreThreshold are
//     stable-sorted by descending score and greedily suppressed: a box is
//     dropped if its IoU with an already kept box exceeds IoUThreshold;
//  2. the kept boxes, concatenated in class order, are stable-sorted by
//     descending score and cut to MaxDetections;
//  3. boxes are mapped back through geom and clipped to the image (boxes
//     that become empty are kept), and class c becomes category categories[c].
//
// Candidates must be in decoder order. The result is sorted by score, descending.
func Postprocess(cands []Candidate, cfg Config, geom Geometry, categories []int) ([]coco.Detection, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := geom.Validate(); err != nil {
		return nil, err
	}
	byClass := map[int][]Candidate{}
	for i, c := range cands {
		if c.Class < 0 || c.Class >= len(categories) {
			return nil, fmt.Errorf("detect: candidate %d has class %d, but only %d categories are mapped", i, c.Class, len(categories))
		}
		if math.IsNaN(c.Score) {
			return nil, fmt.Errorf("detect: candidate %d (class %d) has a NaN score", i, c.Class)
		}
		if c.Score >= cfg.ScoreThreshold {
			byClass[c.Class] = append(byClass[c.Class], c)
		}
	}
	classes := make([]int, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	var kept []Candidate
	for _, c := range classes {
		kept = nms(kept, byClass[c], cfg.IoUThreshold)
	}
	sortByScore(kept)
	if len(kept) > cfg.MaxDetections {
		kept = kept[:cfg.MaxDetections]
	}
	out := make([]coco.Detection, len(kept))
	for i, k := range kept {
		x1 := clip((k.X1-geom.DX)/geom.ScaleX, float64(geom.W))
		y1 := clip((k.Y1-geom.DY)/geom.ScaleY, float64(geom.H))
		x2 := clip((k.X2-geom.DX)/geom.ScaleX, float64(geom.W))
		y2 := clip((k.Y2-geom.DY)/geom.ScaleY, float64(geom.H))
		out[i] = coco.Detection{CategoryID: categories[k.Class], Score: k.Score}
		out[i].Box.X, out[i].Box.Y, out[i].Box.W, out[i].Box.H = x1, y1, x2-x1, y2-y1
	}
	return out, nil
}

func clip(v, hi float64) float64 { return math.Min(math.Max(v, 0), hi) }

// sortByScore stable-sorts by descending score.
func sortByScore(c []Candidate) {
	slices.SortStableFunc(c, func(a, b Candidate) int { return cmp.Compare(b.Score, a.Score) })
}

// nms appends to dst the boxes of one class that survive greedy NMS, in
// keep order. It sorts cs in place.
func nms(dst, cs []Candidate, thr float64) []Candidate {
	sortByScore(cs)
	start := len(dst)
	for _, c := range cs {
		keep := true
		for _, k := range dst[start:] {
			if IoU(k, c) > thr {
				keep = false
				break
			}
		}
		if keep {
			dst = append(dst, c)
		}
	}
	return dst
}

// IoU returns the intersection over union of two corner boxes, without +1:
// the intersection's sides are clamped at 0, and an empty union gives 0.
func IoU(a, b Candidate) float64 {
	iw := math.Max(0, math.Min(a.X2, b.X2)-math.Max(a.X1, b.X1))
	ih := math.Max(0, math.Min(a.Y2, b.Y2)-math.Max(a.Y1, b.Y1))
	inter := iw * ih
	union := (a.X2-a.X1)*(a.Y2-a.Y1) + (b.X2-b.X1)*(b.Y2-b.Y1) - inter
	if !(union > 0) {
		return 0
	}
	return inter / union
}
