package sut

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/rgb"
)

// conventionModel is a fixture of testdata/conventions (make.py): the
// tiny CNN in one input convention, with the configuration that feeds it.
type conventionModel struct {
	file string
	cfg  ClassifierConfig
}

var imageNetMean, imageNetStd = [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225}

// conventionModels are the fixtures other than the twin, each configured
// as its convention says.
var conventionModels = []conventionModel{
	{"nhwc.onnx", ClassifierConfig{Layout: preprocess.NHWC, Mean: imageNetMean, Std: imageNetStd}},
	{"bgr_pixel.onnx", ClassifierConfig{BGR: true, Scale: preprocess.ScalePixel, Mean: [3]float64{123.675, 116.28, 103.53}, Std: [3]float64{1, 1, 1}}},
	{"nhwc_bgr_pixel.onnx", ClassifierConfig{Layout: preprocess.NHWC, BGR: true, Scale: preprocess.ScalePixel, Mean: [3]float64{123.675, 116.28, 103.53}, Std: [3]float64{1, 1, 1}}},
	{"symmetric.onnx", ClassifierConfig{Scale: preprocess.ScaleSymmetric, Std: [3]float64{1, 1, 1}}},
	{"gray.onnx", ClassifierConfig{Mean: [3]float64{0.5, 0.5, 0.5}, Std: [3]float64{0.25, 0.25, 0.25}}},
}

func conventionPath(name string) string { return filepath.Join("testdata", "conventions", name) }

// grayImages returns the images with R = G = B = their luma (what a grey
// model sees of them), so that the RGB twin sees the same.
func grayImages(imgs []rgb.Image) []rgb.Image {
	out := make([]rgb.Image, len(imgs))
	for i, m := range imgs {
		g := rgb.New(m.W, m.H)
		for p, l := range preprocess.Luma(m.Pix) {
			g.Pix[3*p], g.Pix[3*p+1], g.Pix[3*p+2] = l, l, l
		}
		out[i] = g
	}
	return out
}

// TestConventionFixtures runs every convention fixture, configured as its
// convention says, on the shared CIFAR-10 test images: each gives the
// NCHW RGB twin's logits within 1e-5 and the same top-1 class (the grey
// model and the twin see the images' luma).
func TestConventionFixtures(t *testing.T) {
	imgs := cifarImages(t, 1017)
	twin, err := LoadClassifier(conventionPath("twin_nchw_rgb.onnx"), ClassifierConfig{Mean: imageNetMean, Std: imageNetStd})
	if err != nil {
		t.Fatal(err)
	}
	want, err := twin.Classify(imgs)
	if err != nil {
		t.Fatal(err)
	}
	wantGray, err := twin.Classify(grayImages(imgs))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range conventionModels {
		t.Run(tc.file, func(t *testing.T) {
			c, err := LoadClassifier(conventionPath(tc.file), tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			in, ref := imgs, want
			if c.Config().Channels == 1 {
				in, ref = grayImages(imgs), wantGray
			}
			got, err := c.Classify(in)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for i := range got {
				if got[i].Class != ref[i].Class {
					t.Errorf("image %d: class %d, the twin's %d", i, got[i].Class, ref[i].Class)
				}
				for k, v := range got[i].Logits {
					worst = max(worst, math.Abs(float64(v-ref[i].Logits[k])))
				}
			}
			if worst > 1e-5 {
				t.Errorf("largest logit difference from the twin %.3g, want ≤ 1e-5", worst)
			}
			t.Logf("%d images: largest logit difference from the twin %.3g", len(got), worst)
			// The test can tell: with the layout kept but the rest of the
			// convention left at the defaults, the logits differ.
			wrong := ClassifierConfig{Layout: tc.cfg.Layout, Mean: imageNetMean, Std: imageNetStd}
			if wrong == tc.cfg {
				return
			}
			w, err := LoadClassifier(conventionPath(tc.file), wrong)
			if err != nil {
				t.Fatal(err)
			}
			bad, err := w.Classify(in[:1])
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(float64(bad[0].Logits[0] - ref[0].Logits[0])); d < 1e-3 {
				t.Errorf("with the default convention: logit 0 differs by %.3g only", d)
			}
		})
	}
}

// TestConventionLayoutErrors: a layout the model's shape contradicts is an
// error naming the layout expected, before any inference.
func TestConventionLayoutErrors(t *testing.T) {
	for _, tc := range []struct {
		file string
		cfg  ClassifierConfig
		want string
	}{
		{"nhwc.onnx", ClassifierConfig{Layout: preprocess.NCHW, Std: imageNetStd}, "layout nchw, but the model's input [-1 32 32 3] is nhwc (channels last); want layout nhwc"},
		{"twin_nchw_rgb.onnx", ClassifierConfig{Layout: preprocess.NHWC, Std: imageNetStd}, "want layout nchw"},
		{"gray.onnx", ClassifierConfig{BGR: true, Std: imageNetStd}, "channel order bgr, but the model has 1 input channel (grey); want rgb"},
	} {
		_, err := LoadClassifier(conventionPath(tc.file), tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.file, err, tc.want)
		}
	}
}
