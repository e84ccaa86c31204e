package sut

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// TestZooClassifiers loads models of issue #18's zoo (nn/testdata/models,
// checked against ONNX Runtime there) as the classifier under test, as
// sut.model in a config does, with the input size taken from the model,
// and classifies four images in one batch and one by one: the logits must
// agree and be finite.
func TestZooClassifiers(t *testing.T) {
	for _, name := range []string{"vit_small_o17", "swin_small_o13", "convnext_small_o14", "maxvit_small_o17",
		"efficientnet_b0_small_o13", "mobilenet_v3_small_o14", "timm_vit_o11", "misc_cnn_o17"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "nn", "testdata", "models", "arch", name+".onnx")
			cfg := DefaultClassifierConfig()
			cfg.Width, cfg.Height = 0, 0
			c, err := LoadClassifier(path, cfg)
			if err != nil {
				t.Fatal(err)
			}
			w, h := c.Config().Width, c.Config().Height
			imgs := make([]rgb.Image, 4)
			for i := range imgs {
				imgs[i] = goldentest.RandomImage(w+5*i, h+3*i, uint64(i)) // resized to the model's input
			}
			batch, err := c.Classify(imgs)
			if err != nil {
				t.Fatal(err)
			}
			for i, img := range imgs {
				alone, err := c.Classify([]rgb.Image{img})
				if err != nil {
					t.Fatal(err)
				}
				got, want := batch[i].Logits, alone[0].Logits
				for k := range want {
					if math.IsNaN(float64(got[k])) || math.IsInf(float64(got[k]), 0) ||
						math.Abs(float64(got[k]-want[k])) > 1e-5*(1+math.Abs(float64(want[k]))) {
						t.Fatalf("image %d: logit %d is %g in the batch, %g alone", i, k, got[k], want[k])
					}
				}
				if batch[i].Class != alone[0].Class {
					t.Errorf("image %d: class %d in the batch, %d alone", i, batch[i].Class, alone[0].Class)
				}
			}
		})
	}
}
