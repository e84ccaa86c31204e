package detect

import (
	"fmt"
	"math"
)

// YOLOHead describes one output scale of a YOLOv3-style detector.
type YOLOHead struct {
	// Stride is the number of input pixels per grid cell.
	Stride float64
	// Anchors are the (width, height) priors of the head's anchors, in
	// input pixels, in channel order.
	Anchors [][2]float64
}

// YOLO decodes YOLOv3-style heads (README §2.6). Each head is
// [1, A·(5+Classes), gridH, gridW]; channel a·(5+Classes)+k belongs to
// anchor a with k = tx, ty, tw, th, objectness, then the class logits.
// For cell (gx, gy):
//
//	cx = (σ(tx)+gx)·stride, cy = (σ(ty)+gy)·stride,
//	w = exp(tw)·anchorW,    h = exp(th)·anchorH,
//	score_c = σ(obj)·σ(logit_c),
//
// in float64 from the float32 outputs. Candidate order: heads in order,
// then anchor, then gy, then gx, then class.
type YOLO struct {
	// Heads describes the model's outputs, in graph-output order.
	Heads []YOLOHead
	// Classes is the number of classes.
	Classes int
}

// YOLOv3Tiny returns the decoder of COCO yolov3-tiny: head0 stride 32 with
// anchors (81,82) (135,169) (344,319), head1 stride 16 with anchors (10,14)
// (23,27) (37,58), 80 classes.
func YOLOv3Tiny() YOLO {
	return YOLO{
		Heads: []YOLOHead{
			{Stride: 32, Anchors: [][2]float64{{81, 82}, {135, 169}, {344, 319}}},
			{Stride: 16, Anchors: [][2]float64{{10, 14}, {23, 27}, {37, 58}}},
		},
		Classes: 80,
	}
}

// NumClasses implements Decoder.
func (y YOLO) NumClasses() int { return y.Classes }

// Validate reports whether the decoder's description is usable.
func (y YOLO) Validate() error {
	if y.Classes <= 0 {
		return fmt.Errorf("detect: YOLO.Classes = %d, want > 0", y.Classes)
	}
	if len(y.Heads) == 0 {
		return fmt.Errorf("detect: YOLO has no heads")
	}
	for i, h := range y.Heads {
		if !(h.Stride > 0) {
			return fmt.Errorf("detect: YOLO head %d: stride %v, want > 0", i, h.Stride)
		}
		if len(h.Anchors) == 0 {
			return fmt.Errorf("detect: YOLO head %d has no anchors", i)
		}
	}
	return nil
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// Decode implements Decoder.
func (y YOLO) Decode(dst []Candidate, heads []Head, minScore float64) ([]Candidate, error) {
	if err := y.Validate(); err != nil {
		return dst, err
	}
	if len(heads) != len(y.Heads) {
		return dst, fmt.Errorf("detect: YOLO decoder expects %d heads, got %d", len(y.Heads), len(heads))
	}
	per := 5 + y.Classes
	for hi, spec := range y.Heads {
		h := heads[hi]
		A := len(spec.Anchors)
		if len(h.Shape) != 4 || h.Shape[0] != 1 || h.Shape[1] != A*per || h.Shape[2] <= 0 || h.Shape[3] <= 0 {
			return dst, fmt.Errorf("detect: head %d (%q) has shape %v, want [1 %d gridH gridW] (%d anchors × (5+%d classes))",
				hi, h.Name, h.Shape, A*per, A, y.Classes)
		}
		gh, gw := h.Shape[2], h.Shape[3]
		if len(h.Data) != A*per*gh*gw {
			return dst, fmt.Errorf("detect: head %d (%q) has %d values, shape %v needs %d", hi, h.Name, len(h.Data), h.Shape, A*per*gh*gw)
		}
		plane := gh * gw
		for a, anchor := range spec.Anchors {
			ch := h.Data[a*per*plane : (a+1)*per*plane]
			for gy := 0; gy < gh; gy++ {
				for gx := 0; gx < gw; gx++ {
					o := gy*gw + gx
					obj := sigmoid(float64(ch[4*plane+o]))
					if math.IsNaN(obj) {
						return dst, fmt.Errorf("detect: head %d (%q): objectness of anchor %d at cell (%d,%d) is NaN", hi, h.Name, a, gx, gy)
					}
					if obj < minScore {
						// score = obj·σ(logit) ≤ obj: no class can pass.
						continue
					}
					cx := (sigmoid(float64(ch[o])) + float64(gx)) * spec.Stride
					cy := (sigmoid(float64(ch[plane+o])) + float64(gy)) * spec.Stride
					bw := math.Exp(float64(ch[2*plane+o])) * anchor[0]
					bh := math.Exp(float64(ch[3*plane+o])) * anchor[1]
					box := Candidate{X1: cx - bw/2, Y1: cy - bh/2, X2: cx + bw/2, Y2: cy + bh/2}
					if math.IsNaN(box.X1 + box.Y1 + box.X2 + box.Y2) {
						return dst, fmt.Errorf("detect: head %d (%q): box of anchor %d at cell (%d,%d) is NaN", hi, h.Name, a, gx, gy)
					}
					for c := 0; c < y.Classes; c++ {
						s := obj * sigmoid(float64(ch[(5+c)*plane+o]))
						if s >= minScore {
							box.Class, box.Score = c, s
							dst = append(dst, box)
						} else if math.IsNaN(s) {
							return dst, fmt.Errorf("detect: head %d (%q): class %d logit of anchor %d at cell (%d,%d) is NaN", hi, h.Name, c, a, gx, gy)
						}
					}
				}
			}
		}
	}
	return dst, nil
}
