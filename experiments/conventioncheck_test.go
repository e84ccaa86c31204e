package experiments

import (
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// cifarFolder writes the first n shared CIFAR-10 test images as PNG files
// into a new folder (an unlabelled data set, format folder) and returns it.
func cifarFolder(t testing.TB, n int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(sharedpath.ForTest(t, "assets/cifar10"), "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for i := range n {
		r := b[i*3073+1 : (i+1)*3073]
		img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
		for p := range 1024 {
			img.SetNRGBA(p%32, p/32, color.NRGBA{r[p], r[1024+p], r[2048+p], 255})
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("img%04d.png", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := png.Encode(f, img); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fashionImages is Debian's Fashion-MNIST test set (dataset-fashion-mnist).
const fashionImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz"

// TestConventionCheck: the check is silent on correctly configured
// models — every convention fixture (unlabelled images), the shipped
// CIFAR-10 models on labelled CIFAR-10 (ResNet-20 also on the COCO
// photographs) and two Fashion-MNIST zoo models (grey) — and warns
// in one line, naming the fix, where a deliberately mis-set convention
// makes predictions collapse or accuracy fall to chance.
func TestConventionCheck(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := cifarFolder(t, 100)
	pix := "  channel_order: bgr\n  scale: pixel\n  mean: [123.675, 116.28, 103.53]\n"
	resnet := filepath.Join(assets, "models", "cifar10_resnet20.onnx")
	for _, tc := range []struct {
		name, model, keys string
		cifar             bool   // labelled CIFAR-10 (else the PNG folder)
		folder            string // another image folder, in the assets
		data              string // another data block (format and path)
		slow              bool   // skipped in short mode
		want, fix         string // in the warning ("" for none)
	}{
		{name: "twin", model: "twin_nchw_rgb.onnx"},
		{name: "nhwc", model: "nhwc.onnx"},
		{name: "bgr pixel", model: "bgr_pixel.onnx", keys: pix},
		{name: "nhwc bgr pixel", model: "nhwc_bgr_pixel.onnx", keys: pix},
		{name: "symmetric", model: "symmetric.onnx", keys: "  scale: symmetric\n"},
		{name: "grey", model: "gray.onnx", keys: "  mean: [0.5]\n  std: [0.25]\n"},
		{name: "resnet20 cifar", model: resnet, keys: "  input_size: 32\n", cifar: true},
		{name: "resnet20 coco", model: resnet, folder: "coco_val2017_subset158/val2017", slow: true},
		{name: "resnet56 cifar", model: filepath.Join(assets, "models", "cifar10_resnet56.onnx"), cifar: true},
		{name: "squeezenet cifar", model: filepath.Join(assets, "models", "cifar10_squeezenet1_1.onnx"), cifar: true, slow: true},
		{name: "fashion-mnist cnn", model: filepath.Join(assets, "models", "fashion-mnist", "fm-cnn.onnx"), keys: "  mean: [0.2860]\n  std: [0.3530]\n",
			data: "  format: fashion-mnist\n  path: " + fashionImages + "\n"},
		{name: "fashion-mnist lenet", model: filepath.Join(assets, "models", "fashion-mnist", "fm-lenet.onnx"), keys: "  mean: [0.2860]\n  std: [0.3530]\n",
			data: "  format: fashion-mnist\n  path: " + fashionImages + "\n"},
		// 0-255 models fed [0, 1], and the reverse: predictions collapse.
		{name: "bgr pixel as the defaults", model: "bgr_pixel.onnx", want: "100 of the first 100 images are predicted as class 3",
			fix: "on the same images sut.scale: pixel, sut.mean: [123.675, 116.28, 103.53], sut.std: [1, 1, 1] looks right"},
		{name: "bgr pixel as bgr unit", model: "bgr_pixel.onnx", keys: "  channel_order: bgr\n", want: "predicted as class 3", fix: "sut.scale: pixel"},
		{name: "twin as pixel", model: "twin_nchw_rgb.onnx", keys: "  scale: pixel\n", want: "predicted as class 3",
			fix: "on the same images sut.scale: unit, sut.mean: [0.485, 0.456, 0.406], sut.std: [0.229, 0.224, 0.225] looks right"},
		{name: "resnet20 as pixel", model: resnet, keys: "  input_size: 32\n  scale: pixel\n", cifar: true, want: "accuracy 12.0 % on the first 100 labelled images, chance is 10.0 %",
			fix: "sut.scale: unit, sut.mean: [0.485, 0.456, 0.406]"},
		// A trained model fed BGR as RGB keeps most of its accuracy (89 %):
		// no warning, the check cannot see it.
		{name: "resnet20 as bgr", model: resnet, keys: "  input_size: 32\n  channel_order: bgr\n", cifar: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.slow && testing.Short() {
				t.Skip("slow: COCO photographs or a 224×224 model")
			}
			if tc.data != "" {
				if _, err := os.Stat(fashionImages); err != nil {
					t.Skip("no Fashion-MNIST (Debian's dataset-fashion-mnist):", err)
				}
			}
			model := tc.model
			if !filepath.IsAbs(model) {
				model = conventionFixture(t, model)
			}
			doc := conventionConfig(t, "x", tc.keys)
			doc = strings.Replace(doc, conventionFixture(t, "x"), model, 1)
			doc = strings.Replace(doc, "limit: 20", "limit: 100", 1)
			switch {
			case tc.data != "":
				doc = strings.Replace(doc, "  format: cifar10\n  path: cifar10/test_batch_first1017.bin\n", tc.data, 1)
			case tc.folder != "":
				doc = strings.Replace(strings.Replace(doc, "format: cifar10", "format: folder", 1), "path: cifar10/test_batch_first1017.bin\n  limit: 100", "path: "+tc.folder, 1)
			case !tc.cifar:
				doc = strings.Replace(strings.Replace(doc, "format: cifar10", "format: folder", 1), "path: cifar10/test_batch_first1017.bin\n  limit: 100", "path: "+dir, 1)
			}
			cfg, err := parseConfig([]byte(doc), "conv.yaml", assets)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Output = t.TempDir()
			e, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := e.CheckConvention(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d images (%d labelled, accuracy %.2f): class %d for %.0f %%, %d classes, entropy %.2f bits; %s",
				c.Images, c.Labelled, c.Accuracy, c.Top, 100*c.TopShare, c.Distinct, c.Entropy, c.Warning)
			if tc.want == "" {
				if c.Warning != "" {
					t.Errorf("unexpected warning: %s", c.Warning)
				}
				return
			}
			if !strings.Contains(c.Warning, tc.want) || !strings.Contains(c.Warning, tc.fix) || strings.Contains(c.Warning, "\n") {
				t.Errorf("warning %q\nwant one line containing %q and %q", c.Warning, tc.want, tc.fix)
			}
		})
	}
}
