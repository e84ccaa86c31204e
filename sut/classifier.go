package sut

import (
	"fmt"
	"math"
	"sync"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// ClassifierConfig describes a classifier's input: images are resized to
// Width×Height with Pillow's bilinear filter (skipped when they already
// have that size), scaled to [0, 1] and normalised per channel as
// (x − Mean[c]) / Std[c], each step rounded to float32 as torchvision does.
// A model of one channel gets the image's luma, as Pillow's
// convert("L") computes it, resized and normalised with Mean[0], Std[0]
// (preprocess.Classifier's Gray).
//
// Layout, BGR and Scale are the rest of the model's input convention
// (preprocess.Layout): their zero values are the convention above, NCHW,
// RGB, pixels in [0, 1]; with Scale the mean and std are in the scale's
// units (pixel units for ScalePixel), always listed R, G, B.
type ClassifierConfig struct {
	// Width and Height are the model's input size.
	Width, Height int
	// Channels is the model's number of input channels: 3 (RGB) or 1
	// (grey); 0 means 3.
	Channels int
	// Mean and Std are the per-channel (R, G, B) normalisation; a grey
	// model uses the first value of each.
	Mean, Std [3]float64
	// BatchSize caps the number of images per model run; 0 means all
	// images of a Classify call in one run.
	BatchSize int
	// Layout is the input's memory order: NCHW (the zero value) or NHWC.
	Layout preprocess.Layout
	// BGR feeds the channels in the order B, G, R.
	BGR bool
	// Scale maps pixel values before Mean and Std: v/255 (the zero
	// value), v or v/127.5 − 1.
	Scale preprocess.Scale
}

// DefaultClassifierConfig returns the configuration of the paper's
// SqueezeNet: 224×224 input, torchvision's ImageNet mean (0.485, 0.456,
// 0.406) and std (0.229, 0.224, 0.225), one run per call.
func DefaultClassifierConfig() ClassifierConfig {
	return ClassifierConfig{
		Width: 224, Height: 224,
		Mean: [3]float64{0.485, 0.456, 0.406},
		Std:  [3]float64{0.229, 0.224, 0.225},
	}
}

// Validate reports whether c is usable.
func (c ClassifierConfig) Validate() error {
	if c.Width < 1 || c.Height < 1 {
		return fmt.Errorf("sut: classifier input size %dx%d, want at least 1x1", c.Width, c.Height)
	}
	if c.Channels != 0 && c.Channels != 1 && c.Channels != 3 {
		return fmt.Errorf("sut: classifier of %d input channels, want 1 (grey) or 3 (RGB)", c.Channels)
	}
	for i := range 3 {
		if math.IsNaN(c.Mean[i]) || math.IsInf(c.Mean[i], 0) {
			return fmt.Errorf("sut: classifier mean[%d] = %v, want a finite value", i, c.Mean[i])
		}
		if !(c.Std[i] > 0) || math.IsInf(c.Std[i], 0) {
			return fmt.Errorf("sut: classifier std[%d] = %v, want a finite value > 0", i, c.Std[i])
		}
	}
	if c.BatchSize < 0 {
		return fmt.Errorf("sut: classifier batch size %d, want ≥ 0 (0 = whole call)", c.BatchSize)
	}
	if c.Layout != preprocess.NCHW && c.Layout != preprocess.NHWC {
		return fmt.Errorf("sut: classifier layout %v, want nchw or nhwc", c.Layout)
	}
	if c.Scale < preprocess.ScaleUnit || c.Scale > preprocess.ScaleSymmetric {
		return fmt.Errorf("sut: classifier scale %v, want unit, pixel or symmetric", c.Scale)
	}
	if c.BGR && c.Channels == 1 {
		return fmt.Errorf("sut: classifier channel order bgr, but the model has 1 input channel (grey); want rgb")
	}
	return nil
}

// Prediction is a classifier's answer for one image.
type Prediction struct {
	// Class is the top-1 class: the first index of the maximum logit.
	Class int
	// Margin is the top-1 logit minus the top-2 logit (0 for a tie, and 0
	// when the model has a single class).
	Margin float32
	// Logits are the model's raw outputs for the image.
	Logits []float32
}

// Classifier is an ONNX image classifier under test. The model's first
// input is [N, C, Height, Width] (C = Config().Channels), or [N, Height,
// Width, C] for Layout NHWC, and its first output the logits [N, classes].
// A Classifier is as safe for concurrent use as its Model (an *nn.Model is
// not: use one Classifier per goroutine over nn.Model.Clone).
type Classifier struct {
	m   Model
	cfg ClassifierConfig
	// float32 normalisation constants.
	mean, std [3]float32
	// inputs holds Classify's input buffers (*[]float32) for reuse: a
	// batch of SqueezeNet-224's 60 follow-ups is 36 MB, which would
	// otherwise be allocated and cleared for every batch.
	inputs sync.Pool
}

// NewClassifier returns a classifier running m with cfg. Use
// LoadClassifier to load and check an ONNX file.
func NewClassifier(m Model, cfg ClassifierConfig) (*Classifier, error) {
	if m == nil {
		return nil, fmt.Errorf("sut: classifier model is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Channels == 0 {
		cfg.Channels = 3
	}
	c := &Classifier{m: m, cfg: cfg}
	for i := range 3 {
		c.mean[i], c.std[i] = float32(cfg.Mean[i]), float32(cfg.Std[i])
	}
	return c, nil
}

// Config returns the classifier's configuration.
func (c *Classifier) Config() ClassifierConfig { return c.cfg }

// Classify runs the model on imgs (in batches of Config().BatchSize) and
// returns one prediction per image, in order.
func (c *Classifier) Classify(imgs []rgb.Image) ([]Prediction, error) {
	out := make([]Prediction, 0, len(imgs))
	bs := c.cfg.BatchSize
	if bs == 0 {
		bs = len(imgs)
	}
	for start := 0; start < len(imgs); start += bs {
		batch := imgs[start:min(start+bs, len(imgs))]
		buf, _ := c.inputs.Get().(*[]float32)
		if buf == nil {
			buf = new([]float32)
		}
		in, err := c.input(buf, batch)
		var outs []*tensor.Dense
		if err == nil {
			outs, err = c.m.Run(in)
		}
		// The model reads its input only while it runs.
		c.inputs.Put(buf)
		if err != nil {
			return nil, fmt.Errorf("sut: classify images %d..%d: %w", start, start+len(batch)-1, err)
		}
		if len(outs) == 0 {
			return nil, fmt.Errorf("sut: classifier model returned no outputs")
		}
		logits, shape, err := float32Data(outs[0], "classifier output 0 (logits)", len(batch), -1)
		if err != nil {
			return nil, err
		}
		k := shape[1]
		if k < 1 {
			return nil, fmt.Errorf("sut: classifier output has shape %v, want at least one class", shape)
		}
		for i := range batch {
			p, err := predict(logits[i*k : (i+1)*k])
			if err != nil {
				return nil, fmt.Errorf("sut: image %d: %w", start+i, err)
			}
			out = append(out, p)
		}
	}
	return out, nil
}

// predict turns one image's logits into a prediction.
func predict(logits []float32) (Prediction, error) {
	p := Prediction{Logits: append([]float32(nil), logits...)}
	best := 0
	for i, v := range logits {
		if math.IsNaN(float64(v)) {
			return Prediction{}, fmt.Errorf("logit %d is NaN", i)
		}
		if v > logits[best] {
			best = i
		}
	}
	p.Class = best
	second := float32(math.Inf(-1))
	for i, v := range logits {
		if i != best && v > second {
			second = v
		}
	}
	if len(logits) > 1 {
		p.Margin = logits[best] - second
	}
	return p, nil
}

// Input returns the model input for imgs: the [N, C, Height, Width] (or
// NHWC) float32 tensor Classify feeds the model (preprocess.Classifier).
func (c *Classifier) Input(imgs []rgb.Image) (*tensor.Dense, error) {
	return c.input(new([]float32), imgs)
}

// input is Input in the buffer *buf, grown when it is too small (every
// value is written).
func (c *Classifier) input(buf *[]float32, imgs []rgb.Image) (*tensor.Dense, error) {
	if len(imgs) == 0 {
		return nil, fmt.Errorf("no images")
	}
	pp := c.Preprocess()
	n := len(imgs) * pp.Len()
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	b := (*buf)[:n]
	if err := pp.Batch(b, imgs); err != nil {
		return nil, err
	}
	return tensor.New(tensor.WithShape(pp.Shape(len(imgs))...), tensor.WithBacking(b)), nil
}

// Preprocess returns the classifier's preprocessing: its input
// convention, in the one place that defines it.
func (c *Classifier) Preprocess() preprocess.Classifier {
	return preprocess.Classifier{W: c.cfg.Width, H: c.cfg.Height,
		Norm: preprocess.Norm{Mean: c.mean, Std: c.std, Scale: c.cfg.Scale},
		Gray: c.cfg.Channels == 1, Layout: c.cfg.Layout, BGR: c.cfg.BGR}
}
