package sut

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut/detect"
)

// cifarImages reads the first n images of the lossless CIFAR-10 test file.
func cifarImages(t testing.TB, n int) []rgb.Image {
	t.Helper()
	dir := sharedpath.ForTest(t, "assets/cifar10")
	b, err := os.ReadFile(filepath.Join(dir, "test_batch_first1017.bin"))
	if err != nil {
		t.Fatal(err)
	}
	const rec = 3073
	if len(b) < n*rec {
		t.Fatalf("CIFAR file too short")
	}
	out := make([]rgb.Image, n)
	for i := range out {
		r := b[i*rec+1 : (i+1)*rec]
		img := rgb.New(32, 32)
		for p := range 1024 {
			for c := range 3 {
				img.Pix[p*3+c] = r[c*1024+p]
			}
		}
		out[i] = img
	}
	return out
}

// TestClassifierInput checks the preprocessing bit for bit against the
// golden ONNX inputs: SqueezeNet (resize 32→224) and ResNet-20 (32×32, no resize).
func TestClassifierInput(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/onnx")
	imgs := cifarImages(t, 8)
	for _, tc := range []struct {
		file string
		n    int
		size int
	}{
		{"cifar10_squeezenet1_1_input.f32", 4, 224},
		{"cifar10_resnet20_input.f32", 8, 32},
	} {
		cfg := DefaultClassifierConfig()
		cfg.Width, cfg.Height = tc.size, tc.size
		c, err := NewClassifier(fakeModel{}, cfg)
		if err != nil {
			t.Fatal(err)
		}
		in, err := c.Input(imgs[:tc.n])
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(in.Shape()) != fmt.Sprint(tensor.Shape{tc.n, 3, tc.size, tc.size}) {
			t.Fatalf("%s: input shape %v", tc.file, in.Shape())
		}
		goldentest.BitEqualF32(t, tc.file, in.Data().([]float32), goldentest.ReadF32(t, filepath.Join(dir, tc.file)))
	}
}

// fakeModel returns, for an [N,3,H,W] input, logits [N, 3] whose values
// are the per-channel means of each image, and counts its runs.
type fakeModel struct {
	runs    *int
	outputs func(n int) []*tensor.Dense // overrides the logits when set
}

func (f fakeModel) Run(inputs ...*tensor.Dense) ([]*tensor.Dense, error) {
	if f.runs != nil {
		*f.runs++
	}
	if len(inputs) != 1 {
		return nil, errors.New("fake: want 1 input")
	}
	s := inputs[0].Shape()
	n, plane := s[0], s[2]*s[3]
	if f.outputs != nil {
		return f.outputs(n), nil
	}
	x := inputs[0].Data().([]float32)
	out := make([]float32, n*3)
	for i := range n {
		for c := range 3 {
			var sum float32
			for _, v := range x[(i*3+c)*plane : (i*3+c+1)*plane] {
				sum += v
			}
			out[i*3+c] = sum / float32(plane)
		}
	}
	return []*tensor.Dense{tensor.New(tensor.WithShape(n, 3), tensor.WithBacking(out))}, nil
}

func solid(w, h int, r, g, b uint8) rgb.Image {
	img := rgb.New(w, h)
	for i := 0; i < len(img.Pix); i += 3 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2] = r, g, b
	}
	return img
}

func TestClassify(t *testing.T) {
	runs := 0
	cfg := ClassifierConfig{Width: 8, Height: 6, Mean: [3]float64{0, 0, 0}, Std: [3]float64{1, 1, 1}, BatchSize: 2}
	c, err := NewClassifier(fakeModel{runs: &runs}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	imgs := []rgb.Image{
		solid(8, 6, 255, 0, 0),     // class 0
		solid(16, 16, 0, 255, 51),  // class 1, resized
		solid(3, 2, 0, 102, 255),   // class 2, resized
		solid(8, 6, 255, 255, 255), // three-way tie: first index
		solid(8, 6, 255, 255, 0),   // two-way tie
	}
	preds, err := c.Classify(imgs)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 3 {
		t.Errorf("%d model runs for 5 images in batches of 2, want 3", runs)
	}
	wantClass := []int{0, 1, 2, 0, 0}
	wantMargin := []float32{1, 1 - float32(51)/255, 1 - float32(102)/255, 0, 0}
	for i, p := range preds {
		if p.Class != wantClass[i] || math.Abs(float64(p.Margin-wantMargin[i])) > 1e-6 || len(p.Logits) != 3 {
			t.Errorf("image %d: got %+v, want class %d margin %v", i, p, wantClass[i], wantMargin[i])
		}
	}
	if !ClassificationViolated(preds[0], preds[1]) || ClassificationViolated(preds[0], preds[3]) {
		t.Errorf("ClassificationViolated: wrong verdicts")
	}
}

func TestClassifierErrors(t *testing.T) {
	cfg := DefaultClassifierConfig()
	bad := []func() error{
		func() error { _, err := NewClassifier(nil, cfg); return err },
		func() error { c := cfg; c.Width = 0; _, err := NewClassifier(fakeModel{}, c); return err },
		func() error { c := cfg; c.Std[1] = 0; _, err := NewClassifier(fakeModel{}, c); return err },
		func() error { c := cfg; c.Mean[2] = math.NaN(); _, err := NewClassifier(fakeModel{}, c); return err },
		func() error { c := cfg; c.BatchSize = -1; _, err := NewClassifier(fakeModel{}, c); return err },
		func() error {
			c, _ := NewClassifier(fakeModel{}, cfg)
			_, err := c.Classify([]rgb.Image{{W: 4, H: 4, Pix: make([]uint8, 5)}})
			return err
		},
		func() error {
			c, _ := NewClassifier(fakeModel{}, cfg)
			_, err := c.Classify([]rgb.Image{rgb.New(0, 0)})
			return err
		},
		func() error { // wrong output batch
			m := fakeModel{outputs: func(n int) []*tensor.Dense {
				return []*tensor.Dense{tensor.New(tensor.WithShape(n+1, 10), tensor.WithBacking(make([]float32, (n+1)*10)))}
			}}
			c, _ := NewClassifier(m, cfg)
			_, err := c.Classify([]rgb.Image{rgb.New(2, 2)})
			return err
		},
		func() error { // NaN logits
			m := fakeModel{outputs: func(n int) []*tensor.Dense {
				return []*tensor.Dense{tensor.New(tensor.WithShape(n, 2), tensor.WithBacking([]float32{1, float32(math.NaN())}))}
			}}
			c, _ := NewClassifier(m, cfg)
			_, err := c.Classify([]rgb.Image{rgb.New(2, 2)})
			return err
		},
	}
	for i, f := range bad {
		if err := f(); err == nil {
			t.Errorf("case %d: no error", i)
		} else {
			t.Logf("case %d: %v", i, err)
		}
	}
}

// headsModel is a fake detector model returning fixed heads.
type headsModel struct{ heads []*tensor.Dense }

func (h headsModel) Run(inputs ...*tensor.Dense) ([]*tensor.Dense, error) { return h.heads, nil }

func goldenHeads(t testing.TB, path string) []*tensor.Dense {
	data := goldentest.ReadF32(t, path)
	n0 := 255 * 13 * 13
	return []*tensor.Dense{
		tensor.New(tensor.WithShape(1, 255, 13, 13), tensor.WithBacking(data[:n0])),
		tensor.New(tensor.WithShape(1, 255, 26, 26), tensor.WithBacking(data[n0:])),
	}
}

func goldenDets(t testing.TB, path string) []Detection {
	rows := goldentest.ReadCSV(t, path)
	var out []Detection
	for _, r := range rows.Records {
		v := goldentest.Floats(t, path, r)
		d := Detection{CategoryID: int(v[1]), Score: v[2]}
		d.Box.X, d.Box.Y, d.Box.W, d.Box.H = v[3], v[4], v[5], v[6]
		out = append(out, d)
	}
	return out
}

func compareDets(t *testing.T, got, want []Detection, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d detections, want %d", len(got), len(want))
	}
	close := func(a, b float64) bool { return math.Abs(a-b) <= rel*math.Max(1, math.Abs(b)) }
	for i := range want {
		g, w := got[i], want[i]
		if g.CategoryID != w.CategoryID || !close(g.Score, w.Score) || !close(g.Box.X, w.Box.X) ||
			!close(g.Box.Y, w.Box.Y) || !close(g.Box.W, w.Box.W) || !close(g.Box.H, w.Box.H) {
			t.Errorf("detection %d: got %+v, want %+v", i, g, w)
		}
	}
}

// TestDetectorPipeline checks the letterbox input bit for bit from the
// golden decoded pixels of image 22192, and the decoding of the golden
// heads through Detect.
func TestDetectorPipeline(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	img := goldentest.ReadPNG(t, filepath.Join(dir, "mr_22192_decoded_rgb.png"))
	d, err := NewDetector(headsModel{goldenHeads(t, filepath.Join(dir, "img_22192_heads.f32"))}, DefaultDetectorConfig())
	if err != nil {
		t.Fatal(err)
	}
	in, geom, err := d.Input(img)
	if err != nil {
		t.Fatal(err)
	}
	if geom != (detect.Geometry{W: 640, H: 426, DX: 0, DY: 70, ScaleX: 0.65, ScaleY: 0.65}) {
		t.Errorf("geometry %+v", geom)
	}
	goldentest.BitEqualF32(t, "letterbox input", in.Data().([]float32), goldentest.ReadF32(t, filepath.Join(dir, "img_22192_input.f32")))
	dets, err := d.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	compareDets(t, dets, goldenDets(t, filepath.Join(dir, "img_22192_dets.csv")), 1e-9)
}

func TestDetectorErrors(t *testing.T) {
	cfg := DefaultDetectorConfig()
	bad := []func() error{
		func() error { _, err := NewDetector(nil, cfg); return err },
		func() error { c := cfg; c.InputSize = 0; _, err := NewDetector(headsModel{}, c); return err },
		func() error { c := cfg; c.Decoder = nil; _, err := NewDetector(headsModel{}, c); return err },
		func() error {
			c := cfg
			c.Categories = c.Categories[:79]
			_, err := NewDetector(headsModel{}, c)
			return err
		},
		func() error { c := cfg; c.Post.IoUThreshold = 2; _, err := NewDetector(headsModel{}, c); return err },
		func() error { // model returns one head
			d, _ := NewDetector(headsModel{[]*tensor.Dense{tensor.New(tensor.WithShape(1, 255, 13, 13), tensor.WithBacking(make([]float32, 255*169)))}}, cfg)
			_, err := d.Detect(rgb.New(20, 10))
			return err
		},
		func() error {
			d, _ := NewDetector(headsModel{}, cfg)
			_, err := d.Detect(rgb.New(0, 10))
			return err
		},
		func() error {
			d, _ := NewDetector(headsModel{}, cfg)
			_, err := d.Detect(rgb.Image{W: 3, H: 3, Pix: make([]uint8, 5)})
			return err
		},
	}
	for i, f := range bad {
		if err := f(); err == nil {
			t.Errorf("case %d: no error", i)
		} else {
			t.Logf("case %d: %v", i, err)
		}
	}
}

// TestDetectionOracle checks the verdict rule on the golden image-22192
// table (map_original, map_transformed, violation for all 59 MRs), plus
// the −1 rule and a near-tie.
func TestDetectionOracle(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	dets := map[string][]Detection{}
	path := filepath.Join(dir, "mr_22192_dets.csv")
	for _, r := range goldentest.ReadCSV(t, path).Records {
		v := goldentest.Floats(t, path, r[2:])
		d := Detection{CategoryID: int(v[0]), Score: v[1]}
		d.Box.X, d.Box.Y, d.Box.W, d.Box.H = v[2], v[3], v[4], v[5]
		dets[r[0]+","+r[1]] = append(dets[r[0]+","+r[1]], d)
	}
	gt := map[string][]Annotation{}
	path = filepath.Join(dir, "mr_22192_gt.csv")
	for _, r := range goldentest.ReadCSV(t, path).Records {
		v := goldentest.Floats(t, path, r[2:])
		a := Annotation{ID: int64(v[0]), CategoryID: int(v[1]), IsCrowd: v[2] != 0}
		a.Box.X, a.Box.Y, a.Box.W, a.Box.H = v[3], v[4], v[5], v[6]
		gt[r[0]+","+r[1]] = append(gt[r[0]+","+r[1]], a)
	}
	o := DetectionOracle{Threshold: DefaultDetectionThreshold}
	path = filepath.Join(dir, "mr_22192_results.csv")
	res := goldentest.ReadCSV(t, path).Records
	if len(res) != 59 {
		t.Fatalf("%d rows, want 59", len(res))
	}
	violations := 0
	for _, r := range res {
		key := r[0] + "," + r[1]
		v := goldentest.Floats(t, path, r[2:5])
		got, err := o.Verdict(gt["none,"], dets["none,"], gt[key], dets[key])
		if err != nil {
			t.Fatal(err)
		}
		want := DetectionVerdict{MapOriginal: v[0], MapTransformed: v[1], Violated: v[2] != 0}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", key, got, want)
		}
		if got.Violated {
			violations++
		}
	}
	t.Logf("image 22192: %d of 59 follow-ups violate", violations)

	for _, tc := range []struct {
		o, t float64
		want bool
	}{
		{-1, -1, false}, // no annotations: always pass
		{0.7499999999999999, 0.6999999999999998, false}, // golden near-tie (img 802, blur): pass
		{0.75, 0.6999999999999999, true},
		{0.3416666666666667, 0.29999999999999993, false},
		{0.3416666666666667, 0.29, true},
	} {
		if got := o.Violated(tc.o, tc.t); got != tc.want {
			t.Errorf("Violated(%v, %v) = %v, want %v", tc.o, tc.t, got, tc.want)
		}
	}
	v, err := o.Verdict(nil, []Detection{{CategoryID: 1, Score: 1}}, nil, nil)
	if err != nil || v != (DetectionVerdict{-1, -1, false}) {
		t.Errorf("no annotations: %+v, %v; want −1, −1, pass", v, err)
	}
	for _, th := range []float64{-0.1, math.NaN(), math.Inf(1)} {
		if _, err := (DetectionOracle{Threshold: th}).Verdict(nil, nil, nil, nil); err == nil {
			t.Errorf("threshold %v: no error", th)
		}
	}
}

func modelPath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(sharedpath.ForTest(t, "assets/models"), name)
}

// TestSqueezeNetEndToEnd runs the paper's SqueezeNet through nn on CIFAR
// images 0..3 and compares the logits with ONNX Runtime's.
func TestSqueezeNetEndToEnd(t *testing.T) {
	c, err := LoadClassifier(modelPath(t, "cifar10_squeezenet1_1.onnx"), DefaultClassifierConfig())
	if err != nil {
		t.Fatal(err)
	}
	preds, err := c.Classify(cifarImages(t, 4))
	if err != nil {
		t.Fatal(err)
	}
	want := goldentest.ReadF32(t, filepath.Join(sharedpath.ForTest(t, "golden/onnx"), "cifar10_squeezenet1_1_output.f32"))
	maxErr := 0.0
	for i, p := range preds {
		for k, v := range p.Logits {
			w := float64(want[i*10+k])
			e := math.Abs(float64(v)-w) / math.Max(1, math.Abs(w))
			maxErr = math.Max(maxErr, e)
		}
	}
	if maxErr > 1e-4 {
		t.Errorf("logits differ from ONNX Runtime by %.3g (relative to max(1,|v|)), want ≤ 1e-4", maxErr)
	}
	var classes []int
	for _, p := range preds {
		classes = append(classes, p.Class)
	}
	if fmt.Sprint(classes) != "[3 8 8 3]" {
		t.Errorf("classes %v, want [3 8 8 3]", classes)
	}
	t.Logf("max logit error %.3g; margins %v", maxErr, []float32{preds[0].Margin, preds[1].Margin, preds[2].Margin, preds[3].Margin})
}

// TestYOLOEndToEnd runs yolov3-tiny through nn on the golden decoded
// pixels of image 22192: heads ≈ ONNX Runtime's, detections ≈ golden.
func TestYOLOEndToEnd(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	d, err := LoadDetector(modelPath(t, "coco_yolov3-tiny.onnx"), DefaultDetectorConfig())
	if err != nil {
		t.Fatal(err)
	}
	img := goldentest.ReadPNG(t, filepath.Join(dir, "mr_22192_decoded_rgb.png"))
	in, geom, err := d.Input(img)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := d.m.Run(in)
	if err != nil {
		t.Fatal(err)
	}
	want := goldentest.ReadF32(t, filepath.Join(dir, "img_22192_heads.f32"))
	var got []float32
	for _, o := range outs {
		got = append(got, o.Data().([]float32)...)
	}
	if len(got) != len(want) {
		t.Fatalf("heads: %d values, want %d", len(got), len(want))
	}
	maxErr := 0.0
	for i := range want {
		maxErr = math.Max(maxErr, math.Abs(float64(got[i]-want[i])))
	}
	if maxErr > 1e-4 {
		t.Errorf("heads differ from ONNX Runtime by %.3g, want ≤ 1e-4", maxErr)
	}
	// The same path as Detect, reusing this inference (one run in -short).
	dets, err := d.Postprocess([]detect.Head{
		{Name: "head0", Shape: outs[0].Shape(), Data: outs[0].Data().([]float32)},
		{Name: "head1", Shape: outs[1].Shape(), Data: outs[1].Data().([]float32)},
	}, geom)
	if err != nil {
		t.Fatal(err)
	}
	wantDets := goldenDets(t, filepath.Join(dir, "img_22192_dets.csv"))
	if len(dets) != len(wantDets) {
		t.Fatalf("%d detections, want %d", len(dets), len(wantDets))
	}
	maxBox, maxScore := 0.0, 0.0
	for i, w := range wantDets {
		g := dets[i]
		if g.CategoryID != w.CategoryID {
			t.Errorf("detection %d: category %d, want %d", i, g.CategoryID, w.CategoryID)
		}
		maxScore = math.Max(maxScore, math.Abs(g.Score-w.Score))
		for _, p := range [][2]float64{{g.Box.X, w.Box.X}, {g.Box.Y, w.Box.Y}, {g.Box.W, w.Box.W}, {g.Box.H, w.Box.H}} {
			maxBox = math.Max(maxBox, math.Abs(p[0]-p[1]))
		}
	}
	if maxBox > 1e-2 || maxScore > 1e-4 {
		t.Errorf("detections differ by %.3g px and %.3g in score, want ≤ 1e-2 px and 1e-4", maxBox, maxScore)
	}
	t.Logf("heads max |Δ| %.3g; detections max |Δbox| %.3g px, max |Δscore| %.3g", maxErr, maxBox, maxScore)
}

func TestLoadErrors(t *testing.T) {
	cfg := DefaultClassifierConfig()
	cfg.Width, cfg.Height = 32, 32
	if _, err := LoadClassifier(modelPath(t, "cifar10_squeezenet1_1.onnx"), cfg); err == nil {
		t.Error("SqueezeNet with a 32×32 config: no error")
	} else {
		t.Log(err)
	}
	if _, err := LoadClassifier(filepath.Join(t.TempDir(), "missing.onnx"), cfg); err == nil {
		t.Error("missing file: no error")
	}
	c, err := LoadClassifier(modelPath(t, "cifar10_resnet20.onnx"), ClassifierConfig{Std: [3]float64{1, 1, 1}})
	if err != nil {
		t.Fatal(err)
	}
	if c.Config().Width != 32 || c.Config().Height != 32 {
		t.Errorf("size from the model: %dx%d, want 32x32", c.Config().Width, c.Config().Height)
	}
	if _, err := LoadDetector(modelPath(t, "cifar10_resnet20.onnx"), DefaultDetectorConfig()); err == nil {
		t.Error("ResNet-20 as a detector: no error")
	} else {
		t.Log(err)
	}
}

// TestClassifierSweepGolden classifies the golden MR images (images 0..7,
// original + 59 follow-ups each, one batch of 60 per image as the sweep
// does) and compares predictions, margins and verdicts with the ONNX
// Runtime verdict tables, tolerating near-ties (margin ≤ 1e-3).
func TestClassifierSweepGolden(t *testing.T) {
	mrDir := sharedpath.ForTest(t, "golden/mr")
	raw, err := os.ReadFile(filepath.Join(mrDir, "images_8x60x32x32x3.u8"))
	if err != nil {
		t.Fatal(err)
	}
	const nImg, nVar, sz = 8, 60, 32 * 32 * 3
	if len(raw) != nImg*nVar*sz {
		t.Fatalf("images_8x60x32x32x3.u8 has %d bytes, want %d", len(raw), nImg*nVar*sz)
	}
	for _, tc := range []struct {
		model, golden string
		size, images  int
	}{
		// images: how many in -short (the CPU engine is slow at batch 60).
		{"cifar10_resnet20.onnx", "resnet20_first100.csv", 32, 8},
		{"cifar10_squeezenet1_1.onnx", "squeezenet_first100.csv", 224, 1},
	} {
		t.Run(tc.model, func(t *testing.T) {
			images := tc.images
			if !testing.Short() {
				images = nImg
			}
			cfg := DefaultClassifierConfig()
			cfg.Width, cfg.Height = tc.size, tc.size
			c, err := LoadClassifier(modelPath(t, tc.model), cfg)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(sharedpath.ForTest(t, "golden/verdicts"), tc.golden)
			rows := goldentest.ReadCSV(t, path).Records
			maxDM := 0.0
			checked, ties := 0, 0
			for i := range images {
				batch := make([]rgb.Image, nVar)
				for v := range batch {
					off := (i*nVar + v) * sz
					batch[v] = rgb.Image{W: 32, H: 32, Pix: raw[off : off+sz]}
				}
				preds, err := c.Classify(batch)
				if err != nil {
					t.Fatal(err)
				}
				for v := 1; v < nVar; v++ {
					r := rows[i*59+v-1]
					g := goldentest.Floats(t, path, append([]string{r[0]}, r[3:]...))
					if int(g[0]) != i {
						t.Fatalf("%s row %d is image %v, want %d", tc.golden, i*59+v-1, g[0], i)
					}
					po, pt, viol, mo, mt := int(g[1]), int(g[2]), g[3] != 0, g[4], g[5]
					maxDM = math.Max(maxDM, math.Max(math.Abs(float64(preds[0].Margin)-mo), math.Abs(float64(preds[v].Margin)-mt)))
					if mo <= 1e-3 || mt <= 1e-3 {
						ties++
						continue
					}
					checked++
					if preds[0].Class != po || preds[v].Class != pt || ClassificationViolated(preds[0], preds[v]) != viol {
						t.Errorf("image %d %s %s: classes %d→%d, want %d→%d (violation %v)", i, r[1], r[2], preds[0].Class, preds[v].Class, po, pt, viol)
					}
				}
			}
			if maxDM > 1e-3 {
				t.Errorf("margins differ from ONNX Runtime by up to %.3g, want ≤ 1e-3", maxDM)
			}
			t.Logf("%d images × 59 follow-ups: %d verdicts checked, %d near-ties skipped, max |Δmargin| %.3g", images, checked, ties, maxDM)
		})
	}
}

// BenchmarkDetect measures one full Detect (letterbox, yolov3-tiny, decode,
// NMS) on image 22192.
func BenchmarkDetect(b *testing.B) {
	d, err := LoadDetector(modelPath(b, "coco_yolov3-tiny.onnx"), DefaultDetectorConfig())
	if err != nil {
		b.Fatal(err)
	}
	img := goldentest.ReadPNG(b, filepath.Join(sharedpath.ForTest(b, "golden/detection"), "mr_22192_decoded_rgb.png"))
	for b.Loop() {
		if _, err := d.Detect(img); err != nil {
			b.Fatal(err)
		}
	}
}

// boxDecoder is a stand-in for another detector family: one output
// [1, 5] = x1, y1, x2, y2, score of a single class.
type boxDecoder struct{}

func (boxDecoder) NumClasses() int { return 1 }

func (boxDecoder) Decode(dst []detect.Candidate, heads []detect.Head, minScore float64) ([]detect.Candidate, error) {
	if len(heads) != 1 || len(heads[0].Data) != 5 {
		return dst, fmt.Errorf("want one head of 5 values")
	}
	v := heads[0].Data
	if s := float64(v[4]); s >= minScore {
		dst = append(dst, detect.Candidate{X1: float64(v[0]), Y1: float64(v[1]), X2: float64(v[2]), Y2: float64(v[3]), Score: s})
	}
	return dst, nil
}

// TestCustomDecoder plugs a non-YOLO decoder into a Detector.
func TestCustomDecoder(t *testing.T) {
	m := headsModel{[]*tensor.Dense{tensor.New(tensor.WithShape(1, 5), tensor.WithBacking([]float32{8, 100, 40, 300, 0.75}))}}
	cfg := DefaultDetectorConfig()
	cfg.Decoder, cfg.Categories = boxDecoder{}, []int{7}
	d, err := NewDetector(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 832×416: r = 0.5, dy = 104; the box maps to (16, −8)…(80, 392), clipped to y ≥ 0.
	dets, err := d.Detect(rgb.New(832, 416))
	if err != nil {
		t.Fatal(err)
	}
	want := Detection{CategoryID: 7, Score: 0.75}
	want.Box.X, want.Box.Y, want.Box.W, want.Box.H = 16, 0, 64, 392
	if len(dets) != 1 || dets[0] != want {
		t.Errorf("got %+v, want [%+v]", dets, want)
	}
}
