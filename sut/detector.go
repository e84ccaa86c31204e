package sut

import (
	"fmt"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut/detect"
)

// DetectorConfig describes a single-stage detector under test.
type DetectorConfig struct {
	// InputSize is the side of the square letterboxed model input.
	InputSize int
	// Decoder turns the model's outputs into candidates.
	Decoder detect.Decoder
	// Post holds the score threshold, NMS IoU and top-K.
	Post detect.Config
	// Categories maps class index → COCO category id; its length must be
	// the decoder's number of classes.
	Categories []int
}

// DefaultDetectorConfig returns the reference yolov3-tiny pipeline
// (shared/golden/detection/README.md): 416 letterbox, YOLOv3Tiny decoder,
// score ≥ 0.005, NMS IoU > 0.45, top 100, COCO's 80 category ids.
func DefaultDetectorConfig() DetectorConfig {
	return DetectorConfig{
		InputSize:  416,
		Decoder:    detect.YOLOv3Tiny(),
		Post:       detect.DefaultConfig(),
		Categories: detect.COCOCategoryIDs(),
	}
}

// Validate reports whether c is usable.
func (c DetectorConfig) Validate() error {
	if c.InputSize < 1 {
		return fmt.Errorf("sut: detector input size %d, want ≥ 1", c.InputSize)
	}
	if c.Decoder == nil {
		return fmt.Errorf("sut: detector has no decoder")
	}
	if err := c.Post.Validate(); err != nil {
		return err
	}
	if n := c.Decoder.NumClasses(); len(c.Categories) != n {
		return fmt.Errorf("sut: detector maps %d categories, its decoder predicts %d classes", len(c.Categories), n)
	}
	return nil
}

// Detector is an object detector under test: letterbox → model →
// decoder → NMS → top-K → boxes in original pixels, clipped. The model's
// first input is [1, 3, InputSize, InputSize] (RGB in [0, 1], CHW, padding
// 0.5); its outputs, in order, are the decoder's heads. A Detector is as
// safe for concurrent use as its Model.
type Detector struct {
	m   Model
	cfg DetectorConfig
}

// NewDetector returns a detector running m with cfg. Use LoadDetector to
// load and check an ONNX file.
func NewDetector(m Model, cfg DetectorConfig) (*Detector, error) {
	if m == nil {
		return nil, fmt.Errorf("sut: detector model is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg.Categories = append([]int(nil), cfg.Categories...)
	return &Detector{m: m, cfg: cfg}, nil
}

// Config returns the detector's configuration.
func (d *Detector) Config() DetectorConfig { return d.cfg }

// Detect returns the detections of img, sorted by descending score.
func (d *Detector) Detect(img rgb.Image) ([]Detection, error) {
	in, geom, err := d.Input(img)
	if err != nil {
		return nil, err
	}
	outs, err := d.m.Run(in)
	if err != nil {
		return nil, fmt.Errorf("sut: detect: %w", err)
	}
	heads := make([]detect.Head, len(outs))
	for i, o := range outs {
		data, shape, err := float32Data(o, fmt.Sprintf("detector output %d", i), shapeAny(o)...)
		if err != nil {
			return nil, err
		}
		heads[i] = detect.Head{Name: fmt.Sprintf("output %d", i), Shape: shape, Data: data}
	}
	return d.Postprocess(heads, geom)
}

func shapeAny(t *tensor.Dense) []int {
	if t == nil {
		return nil
	}
	s := make([]int, len(t.Shape()))
	for i := range s {
		s[i] = -1
	}
	return s
}

// Postprocess decodes raw heads for an image whose letterbox geometry is
// geom (see Input) into detections. It is Detect without the model.
func (d *Detector) Postprocess(heads []detect.Head, geom detect.Geometry) ([]Detection, error) {
	cands, err := d.cfg.Decoder.Decode(nil, heads, d.cfg.Post.ScoreThreshold)
	if err != nil {
		return nil, fmt.Errorf("sut: detect: %w", err)
	}
	dets, err := detect.Postprocess(cands, d.cfg.Post, geom, d.cfg.Categories)
	if err != nil {
		return nil, fmt.Errorf("sut: detect: %w", err)
	}
	return dets, nil
}

// Input returns the letterboxed model input for img, [1, 3, S, S] with
// S = InputSize, and its geometry (preprocess.Letterbox, README §2.4): the
// image is resized with Pillow's bilinear filter so that its longer side is
// S (the other side by integer division), centred, scaled to [0, 1] as
// float32(v)/255, and the border is 0.5.
func (d *Detector) Input(img rgb.Image) (*tensor.Dense, detect.Geometry, error) {
	if img.W == 0 || img.H == 0 {
		return nil, detect.Geometry{}, fmt.Errorf("sut: detect: image is empty (%dx%d)", img.W, img.H)
	}
	s := d.cfg.InputSize
	buf := make([]float32, 3*s*s)
	g, err := preprocess.Letterbox(buf, img, s)
	if err != nil {
		return nil, detect.Geometry{}, fmt.Errorf("sut: detect: %w", err)
	}
	geom := detect.Geometry{W: g.W, H: g.H, DX: float64(g.DX), DY: float64(g.DY), ScaleX: g.Scale, ScaleY: g.Scale}
	return tensor.New(tensor.WithShape(1, 3, s, s), tensor.WithBacking(buf)), geom, nil
}
