package experiments

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// conventionFixture is the path of a fixture model of
// sut/testdata/conventions (make.py there).
func conventionFixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "sut", "testdata", "conventions", name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// conventionConfig is a configuration of a fixture model with the given
// sut keys (beside model) on the shared CIFAR-10 images.
func conventionConfig(t *testing.T, model, sutKeys string) string {
	return `name: conv
case_study: classification
mode: online
data:
  format: cifar10
  path: cifar10/test_batch_first1017.bin
  limit: 20
sut:
  model: ` + conventionFixture(t, model) + "\n" + sutKeys + `features:
  kind: none
action_set: hierarchical
agents:
  - cover
seeds: 1
`
}

// TestConventionConfig: the keys resolve against the model before any
// inference; contradictions are errors naming the key and the value
// expected.
func TestConventionConfig(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	for _, tc := range []struct {
		name, model, keys string
		want              string // the error, or "" for none
		layout            string // the resolved layout
		w, h              int
	}{
		{name: "auto nhwc, size from the model", model: "nhwc.onnx", layout: "nhwc", w: 32, h: 32},
		{name: "auto nchw", model: "twin_nchw_rgb.onnx", keys: "  input_size: 32\n", layout: "nchw", w: 32, h: 32},
		{name: "nhwc given nchw", model: "nhwc.onnx", keys: "  layout: nchw\n",
			want: "conv.yaml:10:11: sut.layout: nhwc.onnx: layout nchw, but the model's input [-1 32 32 3] is nhwc (channels last); want layout nhwc"},
		{name: "nchw given nhwc", model: "twin_nchw_rgb.onnx", keys: "  layout: nhwc\n", want: "sut.layout: twin_nchw_rgb.onnx: layout nhwc, but the model's input [-1 3 32 32] is nchw (channels first); want layout nchw"},
		{name: "grey bgr", model: "gray.onnx", keys: "  channel_order: bgr\n", want: "sut.channel_order: bgr, but the model gray.onnx has one input channel (grey, fed the luma); want rgb"},
		{name: "size", model: "nhwc.onnx", keys: "  input_size: 224\n", want: "sut.input_size: the model nhwc.onnx takes 32×32 (width×height) images, but the config says 224×224; want [32, 32]"},
		{name: "bad scale", model: "nhwc.onnx", keys: "  scale: 0-255\n", want: `sut.scale: "0-255" is not one of unit, pixel, symmetric`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := parseConfig([]byte(conventionConfig(t, tc.model, tc.keys)), "conv.yaml", assets)
			if err == nil {
				cfg.Output = t.TempDir()
				_, err = Prepare(context.Background(), cfg)
			}
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("got %v\nwant an error containing %s", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.SUT.Layout != tc.layout || cfg.SUT.InputWidth != tc.w || cfg.SUT.InputHeight != tc.h {
				t.Errorf("resolved layout %s, size %dx%d; want %s, %dx%d", cfg.SUT.Layout, cfg.SUT.InputWidth, cfg.SUT.InputHeight, tc.layout, tc.w, tc.h)
			}
		})
	}
}

// TestConventionDefaults: a scale other than unit changes the defaults of
// mean and std; unit keeps ImageNet's.
func TestConventionDefaults(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	for _, tc := range []struct {
		keys      string
		mean, std [3]float64
	}{
		{"", [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225}},
		{"  scale: pixel\n", [3]float64{}, [3]float64{1, 1, 1}},
		{"  scale: symmetric\n", [3]float64{}, [3]float64{1, 1, 1}},
		{"  scale: pixel\n  mean: [123.675, 116.28, 103.53]\n", [3]float64{123.675, 116.28, 103.53}, [3]float64{1, 1, 1}},
	} {
		cfg, err := parseConfig([]byte(conventionConfig(t, "bgr_pixel.onnx", tc.keys)), "conv.yaml", assets)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.SUT.Mean != tc.mean || cfg.SUT.Std != tc.std {
			t.Errorf("%q: mean %v std %v, want %v %v", tc.keys, cfg.SUT.Mean, cfg.SUT.Std, tc.mean, tc.std)
		}
	}
}

// TestConventionCacheKey: the default convention leaves the verdict cache
// key as it was before conventions existed (the committed results'
// tables stay valid); another convention gets a key of its own.
func TestConventionCacheKey(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	key := func(model, keys string) string {
		cfg, err := parseConfig([]byte(conventionConfig(t, model, keys)), "conv.yaml", assets)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Output = t.TempDir()
		e, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(e.verdictKey)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	def := key("twin_nchw_rgb.onnx", "")
	if strings.Contains(def, "Convention") || !strings.HasPrefix(def, `{"Version":1,"Model":`) {
		t.Errorf("default convention: key %s, want the key of before (no Convention)", def)
	}
	explicit := key("twin_nchw_rgb.onnx", "  layout: nchw\n  channel_order: rgb\n  scale: unit\n")
	if explicit != def {
		t.Errorf("the defaults written out: key %s, want %s", explicit, def)
	}
	bgr := key("bgr_pixel.onnx", "  channel_order: bgr\n  scale: pixel\n  mean: [123.675, 116.28, 103.53]\n")
	if !strings.Contains(bgr, `"Convention":"layout nchw, channel_order bgr, scale pixel"`) {
		t.Errorf("bgr pixel: key %s, want its convention folded in", bgr)
	}
}

// TestConventionCommittedKeys: the shipped configurations, written before
// the convention keys existed, still name the committed results' cache
// tables (run.json's sweep_key): the keys' defaults change nothing.
func TestConventionCommittedKeys(t *testing.T) {
	for _, name := range []string{"rq1-classification", "rq1-detection"} {
		cfg, err := LoadConfig(filepath.Join("configs", name+".yaml"), "")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Output = t.TempDir()
		e, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		m, err := record.ReadMeta(filepath.Join("..", "results", name, record.MetaFile))
		if err != nil {
			t.Fatal(err)
		}
		if e.id.SweepKey != m.Identity.SweepKey {
			t.Errorf("%s: sweep key %s, the committed results' %s", name, e.id.SweepKey, m.Identity.SweepKey)
		}
	}
}

// TestFeatureConvention: the feature model's convention keys make a BGR
// 0-255 NHWC feature model (a fixture) give its NCHW RGB twin's features,
// and fold into the feature cache key only when not the default.
func TestFeatureConvention(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	prepare := func(model, keys string) *Experiment {
		doc := strings.Replace(conventionConfig(t, "twin_nchw_rgb.onnx", ""), "features:\n  kind: none\n",
			"features:\n  kind: model\n  model: "+conventionFixture(t, model)+"\n"+keys, 1)
		cfg, err := parseConfig([]byte(doc), "conv.yaml", assets)
		if err != nil {
			t.Fatal(err)
		}
		cfg.Output = t.TempDir()
		e, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	extract := func(e *Experiment) [][]float32 {
		x, err := e.newExt()
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for i := range 4 {
			img, _, err := e.src.Image(i)
			if err != nil {
				t.Fatal(err)
			}
			f, err := x.Extract([]rgb.Image{img})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f[0])
		}
		return out
	}
	twin := prepare("twin_nchw_rgb.onnx", "")
	conv := prepare("nhwc_bgr_pixel.onnx", "  channel_order: bgr\n  scale: pixel\n  mean: [123.675, 116.28, 103.53]\n")
	want, got := extract(twin), extract(conv)
	for i := range want {
		for k := range want[i] {
			if d := got[i][k] - want[i][k]; d > 1e-5 || d < -1e-5 {
				t.Fatalf("image %d feature %d: %v, the twin's %v", i, k, got[i][k], want[i][k])
			}
		}
	}
	key := func(e *Experiment) string {
		b, err := json.Marshal(e.featureKey)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if k := key(twin); strings.Contains(k, "Convention") {
		t.Errorf("default convention: feature key %s", k)
	}
	if k := key(conv); !strings.Contains(k, `"Convention":"channel_order bgr, scale pixel, mean [123.675, 116.28, 103.53], std [1, 1, 1]"`) {
		t.Errorf("bgr pixel: feature key %s", k)
	}
}
