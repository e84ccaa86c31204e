package sut

import (
	"fmt"

	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/sut/detect"
)

// LoadClassifier loads the ONNX classifier in the file at path with nn and
// returns it as a Classifier (see ClassifierFor for the checks).
func LoadClassifier(path string, cfg ClassifierConfig) (*Classifier, error) {
	return loadFor(path, cfg, ClassifierFor)
}

// ClassifierFor returns a Classifier running m, after checking that m has
// one input [N, C, H, W] (cfg.Layout NCHW) or [N, H, W, C] (NHWC) with
// C = 3 (colour) or 1 (grey) whose H and W (where the model fixes them)
// equal cfg.Height and cfg.Width, and a first output of rank 2 ([N,
// classes]). A layout the shape contradicts is an error naming the one
// expected (preprocess.ResolveInput). If cfg.Width and cfg.Height are both 0 they
// are taken from the model; cfg.Channels is always the model's (a
// configured value that contradicts it is an error).
func ClassifierFor(m *nn.Model, cfg ClassifierConfig) (*Classifier, error) {
	if err := oneInput(m, "classifier", "[N,C,H,W]"); err != nil {
		return nil, err
	}
	ins, outs := m.Inputs(), m.Outputs()
	s := ins[0].Shape
	in, err := preprocess.ResolveInput(s, cfg.Layout, false)
	if err != nil {
		return nil, fmt.Errorf("sut: classifier %s: input %q: %w", m.Name(), ins[0].Name, err)
	}
	if cfg.Channels != 0 && cfg.Channels != in.Channels {
		return nil, fmt.Errorf("sut: classifier %s: input %q has %d channels (%v), but the configuration says %d", m.Name(), ins[0].Name, in.Channels, s, cfg.Channels)
	}
	cfg.Channels = in.Channels
	if cfg.Width == 0 && cfg.Height == 0 {
		if in.Height < 1 || in.Width < 1 {
			return nil, fmt.Errorf("sut: classifier %s: input %q has no fixed size (%v); set the input width and height", m.Name(), ins[0].Name, s)
		}
		cfg.Height, cfg.Width = in.Height, in.Width
	}
	if (in.Height > 0 && in.Height != cfg.Height) || (in.Width > 0 && in.Width != cfg.Width) {
		return nil, fmt.Errorf("sut: classifier %s: input %q is %v, but the configured input size is %dx%d (W×H)", m.Name(), ins[0].Name, s, cfg.Width, cfg.Height)
	}
	if len(outs) == 0 || len(outs[0].Shape) != 2 {
		return nil, fmt.Errorf("sut: classifier %s: first output %v, want logits [N, classes]", m.Name(), outs)
	}
	return NewClassifier(m, cfg)
}

// LoadDetector loads the ONNX detector in the file at path with nn and
// returns it as a Detector (see DetectorFor for the checks).
func LoadDetector(path string, cfg DetectorConfig) (*Detector, error) {
	return loadFor(path, cfg, DetectorFor)
}

// loadFor loads the ONNX model in the file at path with nn and wraps it
// with wrap (ClassifierFor, DetectorFor).
func loadFor[C any, T any](path string, cfg C, wrap func(*nn.Model, C) (*T, error)) (*T, error) {
	m, err := nn.Load(path)
	if err != nil {
		return nil, err
	}
	return wrap(m, cfg)
}

// oneInput checks that m, a kind ("classifier", "detector") of SUT, has
// exactly one input, the image; want describes its shape.
func oneInput(m *nn.Model, kind, want string) error {
	if ins := m.Inputs(); len(ins) != 1 {
		return fmt.Errorf("sut: %s %s has %d inputs (%v), want 1 image input %s", kind, m.Name(), len(ins), ins, want)
	}
	return nil
}

// DetectorFor returns a Detector running m, after checking that m has one
// input [1, 3, S, S] with S = cfg.InputSize (taken from the model when
// cfg.InputSize is 0) and, for a detect.YOLO decoder, one output per head
// with anchors·(5+classes) channels.
func DetectorFor(m *nn.Model, cfg DetectorConfig) (*Detector, error) {
	if err := oneInput(m, "detector", "[1,3,S,S]"); err != nil {
		return nil, err
	}
	ins, outs := m.Inputs(), m.Outputs()
	s := ins[0].Shape
	if len(s) != 4 || s[1] != 3 || (s[0] > 1) {
		return nil, fmt.Errorf("sut: detector %s: input %q has shape %v, want [1,3,S,S]", m.Name(), ins[0].Name, s)
	}
	if cfg.InputSize == 0 {
		cfg.InputSize = s[2]
	}
	if (s[2] > 0 && s[2] != cfg.InputSize) || (s[3] > 0 && s[3] != cfg.InputSize) {
		return nil, fmt.Errorf("sut: detector %s: input %q is %v, but the configured input size is %d", m.Name(), ins[0].Name, s, cfg.InputSize)
	}
	if y, ok := cfg.Decoder.(detect.YOLO); ok {
		if len(outs) != len(y.Heads) {
			return nil, fmt.Errorf("sut: detector %s has %d outputs (%v), its YOLO decoder has %d heads", m.Name(), len(outs), outs, len(y.Heads))
		}
		for i, o := range outs {
			want := len(y.Heads[i].Anchors) * (5 + y.Classes)
			if len(o.Shape) != 4 || (o.Shape[1] > 0 && o.Shape[1] != want) {
				return nil, fmt.Errorf("sut: detector %s: output %q has shape %v, want [1,%d,gridH,gridW] for head %d", m.Name(), o.Name, o.Shape, want, i)
			}
		}
	}
	return NewDetector(m, cfg)
}
