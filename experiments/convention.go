package experiments

import (
	"path/filepath"

	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/sut"
)

// The input convention of a classifier SUT (sut.layout, sut.channel_order,
// sut.scale, sut.mean, sut.std): what the keys mean, their defaults, and
// how Prepare resolves them against the model. The preprocessing itself is
// package preprocess's (preprocess.Classifier); the defaults are the
// convention of every configuration written before the keys existed
// (NCHW, RGB, [0, 1], ImageNet's mean and std), whose cache keys and
// results therefore stay as they were.

// layoutAuto is sut.layout's default: the layout the model's input shape
// implies.
const layoutAuto = "auto"

// layoutNames are sut.layout's values.
var layoutNames = append([]string{layoutAuto}, preprocess.Layouts...)

const (
	layoutDoc = "the input's memory order: nchw ([N, C, H, W], PyTorch exports), nhwc ([N, H, W, C], Keras/TensorFlow exports via tf2onnx) or auto " +
		"(what the model's input shape says: nhwc when its last axis is 1 or 3 and its second is not, else nchw); a layout the shape contradicts is an error"
	channelOrderDoc = "the order of the colour channels: rgb, or bgr (Caffe- and OpenCV-trained models); sut.mean and sut.std stay listed R, G, B. " +
		"A grey model (one input channel, fed the luma) takes rgb"
	scaleDoc = "what a pixel value v (0-255) becomes before sut.mean and sut.std apply: unit v/255 in [0, 1] (torchvision), " +
		"pixel v in [0, 255] (Caffe, OpenCV; give sut.mean in pixel units, e.g. ImageNet's [123.675, 116.28, 103.53]), symmetric v/127.5 - 1 in [-1, 1] (Inception-style, Keras's \"tf\" mode)"
	meanDefDoc = "ImageNet's [0.485, 0.456, 0.406] with sut.scale unit, else [0, 0, 0]"
	stdDefDoc  = "ImageNet's [0.229, 0.224, 0.225] with sut.scale unit, else [1, 1, 1]"
)

// defaultMean sets sut.mean's default, which depends on sut.scale.
func defaultMean(c *Config) { c.SUT.Mean = scaleMean(c.SUT.Scale) }

// defaultStd sets sut.std's default, which depends on sut.scale.
func defaultStd(c *Config) { c.SUT.Std = scaleStd(c.SUT.Scale) }

// scaleMean returns the default mean for a scale key's value: ImageNet's
// with the unit scale (also when unset, its default), else 0.
func scaleMean(scale string) [3]float64 {
	if scale == "" || scale == preprocess.ScaleUnit.String() {
		return [3]float64{0.485, 0.456, 0.406}
	}
	return [3]float64{}
}

// scaleStd returns the default std for a scale key's value: ImageNet's
// with the unit scale (also when unset, its default), else 1.
func scaleStd(scale string) [3]float64 {
	if scale == "" || scale == preprocess.ScaleUnit.String() {
		return [3]float64{0.229, 0.224, 0.225}
	}
	return [3]float64{1, 1, 1}
}

// resolveInput checks the model's input against the configured SUT s (of
// the configuration key sutKey, "sut" or "regression.sut") and fills in
// what the model decides: an auto layout, and the input size where the
// configuration leaves it out. Contradictions are errors naming the key
// and the value expected.
func resolveInput(cfg *Config, sutKey string, s *SUTConfig, m *nn.Model) error {
	in := m.Inputs()
	if len(in) == 0 {
		return cfg.errAt(sutKey+".model", "%s: want an image model with one input [N, C, H, W] or [N, H, W, C], got none", s.Model)
	}
	shape := in[0].Shape
	if cfg.CaseStudy != studyClassification || s.Layout == "" {
		// A detector, or a SUT read before the keys existed: NCHW.
		if len(shape) != 4 || (shape[1] != 3 && shape[1] != 1) {
			return cfg.errAt(sutKey+".model", "%s: want an image model with input [N, C, H, W], C = 3 (RGB) or 1 (grey), got %v", s.Model, in)
		}
		return checkSize(cfg, sutKey, s, shape[2], shape[3])
	}
	var layout preprocess.Layout
	auto := s.Layout == layoutAuto
	if !auto {
		var err error
		if layout, err = preprocess.ParseLayout(s.Layout); err != nil {
			return cfg.errAt(sutKey+".layout", "%w", err)
		}
	}
	got, err := preprocess.ResolveInput(shape, layout, auto)
	if err != nil {
		key := sutKey + ".layout"
		if _, derr := preprocess.DetectInput(shape); derr != nil {
			key = sutKey + ".model"
		}
		return cfg.errAt(key, "%s: %w", filepath.Base(s.Model), err)
	}
	s.Layout = got.Layout.String()
	if got.Channels == 1 && s.ChannelOrder == "bgr" {
		return cfg.errAt(sutKey+".channel_order", "bgr, but the model %s has one input channel (grey, fed the luma); want rgb", filepath.Base(s.Model))
	}
	if s.InputWidth == 0 && s.InputHeight == 0 {
		if got.Width == 0 || got.Height == 0 {
			return cfg.errAt(sutKey+".input_size", "missing: the model %s leaves its input size open (%v); want [width, height]", filepath.Base(s.Model), shape)
		}
		s.InputWidth, s.InputHeight = got.Width, got.Height
	}
	return checkSize(cfg, sutKey, s, got.Height, got.Width)
}

// checkSize checks the configured input size against the model's (mh, mw,
// ≤ 0 where dynamic).
func checkSize(cfg *Config, sutKey string, s *SUTConfig, mh, mw int) error {
	w, h := s.InputWidth, s.InputHeight
	if w > 0 && ((mh > 0 && mh != h) || (mw > 0 && mw != w)) {
		return cfg.errAt(sutKey+".input_size", "the model %s takes %d×%d (width×height) images, but the config says %d×%d; want [%d, %d]",
			filepath.Base(s.Model), mw, mh, w, h, mw, mh)
	}
	return nil
}

// classifierConfig returns the sut configuration of a classifier SUT
// whose input (resolveInput) has the given channels.
func classifierConfig(s SUTConfig, channels int) (sut.ClassifierConfig, error) {
	c := sut.ClassifierConfig{Width: s.InputWidth, Height: s.InputHeight, Channels: channels, Mean: s.Mean, Std: s.Std, BatchSize: s.BatchSize}
	var err error
	if s.Layout != "" {
		if c.Layout, err = preprocess.ParseLayout(s.Layout); err != nil {
			return c, err
		}
	}
	if s.ChannelOrder != "" {
		if c.BGR, err = preprocess.ParseChannelOrder(s.ChannelOrder); err != nil {
			return c, err
		}
	}
	if s.Scale != "" {
		if c.Scale, err = preprocess.ParseScale(s.Scale); err != nil {
			return c, err
		}
	}
	return c, nil
}

// modelChannels returns the channels of a classifier's input in the
// resolved layout.
func modelChannels(s SUTConfig, m *nn.Model) int {
	sh := m.Inputs()[0].Shape
	if s.Layout == preprocess.NHWC.String() {
		return sh[3]
	}
	return sh[1]
}

// withConvention folds a non-default input convention into a verdict
// cache key; the default one leaves the key as it was.
func withConvention(key any, c sut.ClassifierConfig) any {
	if c.DefaultConvention() {
		return key
	}
	return struct {
		Key        any
		Convention string
	}{key, c.Convention()}
}
