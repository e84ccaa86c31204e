package experiments

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// synthCOCO writes a tiny COCO data set into dir and returns the JSON's
// path: image 11 (colour JPEG 24×16) with a bright object, a box that
// reaches outside the image and a crowd region; image 22 (grey-scale
// JPEG 20×20) with one object; image 33 (colour JPEG) without
// annotations. extra is appended to the annotations array.
func synthCOCO(t *testing.T, dir, extra string) string {
	t.Helper()
	write := func(name string, img image.Image) {
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 95}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := image.NewRGBA(image.Rect(0, 0, 24, 16))
	for y := 0; y < 16; y++ {
		for x := 0; x < 24; x++ {
			c := color.RGBA{R: uint8(20 + x), G: uint8(30 + y), B: 40, A: 255}
			if x >= 4 && x < 14 && y >= 3 && y < 11 {
				c = color.RGBA{R: 230, G: 200, B: 180, A: 255}
			}
			a.Set(x, y, c)
		}
	}
	write("a.jpg", a)
	g := image.NewGray(image.Rect(0, 0, 20, 20))
	for y := 0; y < 20; y++ {
		for x := 0; x < 20; x++ {
			v := uint8(10 + 2*x)
			if x >= 9 && x < 17 && y >= 2 && y < 15 {
				v = 240
			}
			g.SetGray(x, y, color.Gray{Y: v})
		}
	}
	write("g.jpg", g)
	c := image.NewRGBA(image.Rect(0, 0, 12, 12))
	for i := range c.Pix {
		c.Pix[i] = uint8(17 * i)
	}
	write("c.jpg", c)
	doc := `{"images": [
  {"id": 11, "file_name": "a.jpg", "width": 24, "height": 16},
  {"id": 22, "file_name": "g.jpg", "width": 20, "height": 20},
  {"id": 33, "file_name": "c.jpg", "width": 12, "height": 12}],
 "categories": [{"id": 1, "name": "thing"}, {"id": 2, "name": "other"}],
 "annotations": [
  {"id": 1, "image_id": 11, "category_id": 1, "bbox": [4, 3, 10, 8], "area": 80, "iscrowd": 0},
  {"id": 2, "image_id": 11, "category_id": 2, "bbox": [20, 2, 10, 6], "area": 60, "iscrowd": 0},
  {"id": 3, "image_id": 11, "category_id": 1, "bbox": [15, 9, 6, 6], "area": 36, "iscrowd": 1},
  {"id": 4, "image_id": 22, "category_id": 1, "bbox": [9, 2, 8, 13], "area": 104, "iscrowd": 0}` + extra + `]}`
	p := filepath.Join(dir, "instances.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeDetector finds the box of the bright pixels (category 1, score
// 0.9) and always reports the top-left quarter (category 2, score 0.3);
// it counts calls like fakeClassifier.
type fakeDetector struct {
	calls *atomic.Int64
	after int64
	stop  func()
}

func (d fakeDetector) Detect(img rgb.Image) ([]sut.Detection, error) {
	if d.calls != nil {
		if n := d.calls.Add(1); d.after > 0 && n == d.after {
			d.stop()
		}
	}
	x0, y0, x1, y1 := img.W, img.H, -1, -1
	for y := 0; y < img.H; y++ {
		for x := 0; x < img.W; x++ {
			p := img.Pix[3*(y*img.W+x):]
			if int(p[0])+int(p[1])+int(p[2]) >= 3*170 {
				x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x), max(y1, y)
			}
		}
	}
	var out []sut.Detection
	if x1 >= 0 {
		out = append(out, sut.Detection{CategoryID: 1, Score: 0.9, Box: rgb.Box{X: float64(x0), Y: float64(y0), W: float64(x1 - x0 + 1), H: float64(y1 - y0 + 1)}})
	}
	out = append(out, sut.Detection{CategoryID: 2, Score: 0.3, Box: rgb.Box{W: float64(img.W) / 2, H: float64(img.H) / 2}})
	return out, nil
}

func mrRelations(t *testing.T, sc scenario.Scenario) map[string]relation {
	t.Helper()
	m := map[string]relation{}
	for _, v := range sc.Variants() {
		p := v.Value
		if math.IsNaN(p) {
			p = 0
		}
		r, err := mr.New(v.Action, p)
		if err != nil {
			t.Fatal(err)
		}
		m[v.Key()] = r
	}
	return m
}

func openSynth(t *testing.T, extra string) *data.COCO {
	t.Helper()
	dir := t.TempDir()
	c, err := data.OpenCOCO(synthCOCO(t, dir, extra), dir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func sweepDetection(t *testing.T, ctx context.Context, c *data.COCO, sc scenario.Scenario, cache string, det fakeDetector) (*Table, error) {
	return sweepDetectionN(t, ctx, c, sc, cache, det, 2, false)
}

func sweepDetectionN(t *testing.T, ctx context.Context, c *data.COCO, sc scenario.Scenario, cache string, det fakeDetector, workers int, withSut bool) (*Table, error) {
	t.Helper()
	study := &detectionStudy{cases: c, oracle: sut.DetectionOracle{Threshold: 0.05}, newDetector: func() (detector, error) { return det, nil }}
	return sweep(ctx, sweepConfig{
		study: study, source: data.Images{Source: c}, variants: sc.Variants(), relations: mrRelations(t, sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     cache, verdictKey: "det", featureKey: "f", workers: workers, sut: withSut,
	})
}

// The detection loop end to end on a synthetic COCO set (a box outside
// the image, a crowd region, a grey-scale JPEG, an image without
// annotations): online and replay runs make the same choices and see the
// same verdicts and mAPs; the unannotated image scores −1 and always
// passes; the verdicts follow the rule.
func TestDetectionOnlineReplayIdentical(t *testing.T) {
	c := openSynth(t, "")
	if g, _ := c.Case(1); g.Image.Pix[0] != g.Image.Pix[1] || g.Image.Pix[0] != g.Image.Pix[2] {
		t.Fatalf("grey-scale JPEG not replicated to RGB: %v", g.Image.Pix[:3])
	}
	hier := mustScenario(t, "hierarchical")
	tab, err := sweepDetectionN(t, context.Background(), c, hier, t.TempDir(), fakeDetector{}, 2, true)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, j := range tab.judged {
		ids = append(ids, j.id())
	}
	if tab.study.name() != studyDetection || !reflect.DeepEqual(ids, []int64{11, 22, 33}) {
		t.Fatalf("table: case study %s, ids %v", tab.study.name(), ids)
	}
	for _, name := range []string{"hierarchical", "rotation", "hierarchical+sut"} {
		t.Run(name, func(t *testing.T) {
			name, withSut := strings.CutSuffix(name, "+sut")
			sc := mustScenario(t, name)
			rows, err := tab.Verdicts(sc.Variants())
			if err != nil {
				t.Fatal(err)
			}
			viol := 0
			for _, r := range rows {
				if r.Violation != (r.MapTransformed < r.MapOriginal-0.05) {
					t.Fatalf("row %+v breaks the rule", r)
				}
				if r.Image == 2 && (r.MapOriginal != -1 || r.MapTransformed != -1 || r.Violation) {
					t.Fatalf("unannotated image: %+v", r)
				}
				if r.Image != 2 && (r.MapOriginal < 0 || r.MapOriginal > 1 || r.MapTransformed < 0 || r.MapTransformed > 1) {
					t.Fatalf("annotated image: %+v", r)
				}
				if r.Violation {
					viol++
				}
			}
			if viol == 0 || viol == len(rows) {
				t.Fatalf("degenerate fake: %d of %d violations", viol, len(rows))
			}
			feats, layout, err := tab.contexts(withSut)
			if err != nil {
				t.Fatal(err)
			}
			replay, err := NewReplayEnv(rows, feats, layout, sc)
			if err != nil {
				t.Fatal(err)
			}
			var calls atomic.Int64
			online, err := newDetectionEnv(c, fakeExtractor{}, withSut, detection{detector: fakeDetector{calls: &calls}, oracle: sut.DetectionOracle{Threshold: 0.05}}, mrRelations(t, sc), sc)
			if err != nil {
				t.Fatal(err)
			}
			if withSut {
				sameContexts(t, online, replay)
				calls.Store(0)
			}
			run := func(env Env) ([]Step, runResult) {
				var steps []Step
				res, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{
					AgentName: "fake", Seed: 7, Passes: 4, LogInterval: 5, Trace: func(s Step) { steps = append(steps, s) }})
				if err != nil {
					t.Fatal(err)
				}
				return steps, res
			}
			s1, r1 := run(online)
			s2, r2 := run(replay)
			if len(s1) != 12 || !reflect.DeepEqual(s1, s2) {
				t.Fatalf("online and replay traces differ:\n%v\n%v", s1, s2)
			}
			if !reflect.DeepEqual(r1.Run, r2.Run) || !reflect.DeepEqual(r1.Log, r2.Log) {
				t.Fatalf("online and replay results differ:\n%+v\n%+v", r1.Run, r2.Run)
			}
			// The source is detected once per visit of an image, not once
			// per follow-up: 12 follow-ups + at most 12 sources.
			if n := calls.Load(); n > 24 || n < 13 {
				t.Errorf("%d detector calls for 12 iterations", n)
			}
		})
	}
}

// The detection sweep is cached and resumable like the classification
// one, and its CSV has the detection columns with the COCO image ids.
func TestDetectionSweepResumeAndCSV(t *testing.T) {
	c := openSynth(t, "")
	sc := mustScenario(t, "hierarchical")
	full, err := sweepDetection(t, context.Background(), c, sc, t.TempDir(), fakeDetector{})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	// One worker, 60 calls per image: the interrupt comes in the second
	// image, which is dropped at its next follow-up.
	_, err = sweepDetectionN(t, ctx, c, sc, cache, fakeDetector{calls: &calls, after: 70, stop: cancel}, 1, false)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rerun to resume") {
		t.Fatalf("interrupted sweep: err = %v", err)
	}
	calls.Store(0)
	got, err := sweepDetection(t, context.Background(), c, sc, cache, fakeDetector{calls: &calls})
	if err != nil {
		t.Fatal(err)
	}
	if n := calls.Load(); n != 2*60 {
		t.Errorf("resumed sweep made %d detector calls, want 120 (images 1 and 2)", n)
	}
	if !tablesEqual(t, got, full) {
		t.Fatal("resumed detection sweep differs from an uninterrupted one")
	}
	calls.Store(0)
	again, err := sweepDetection(t, context.Background(), c, sc, cache, fakeDetector{calls: &calls})
	if err != nil || calls.Load() != 0 || !tablesEqual(t, again, full) {
		t.Fatalf("cached sweep: err %v, %d calls", err, calls.Load())
	}

	p := filepath.Join(t.TempDir(), "det.csv")
	if err := full.WriteCSV(p, sc.Variants()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if lines[0] != "image_id,mr,param,map_original,map_transformed,violation" || len(lines) != 1+3*59 {
		t.Fatalf("CSV header %q, %d lines", lines[0], len(lines))
	}
	if !strings.HasPrefix(lines[1], "11,blur,,") || !strings.HasPrefix(lines[60], "22,blur,,") || lines[1+2*59] != "33,blur,,-1,-1,0" ||
		!strings.HasPrefix(lines[6], "11,rotation,-90,") {
		t.Fatalf("CSV rows: %q %q %q %q", lines[1], lines[6], lines[60], lines[1+2*59])
	}
	rows, err := record.ReadVerdictsCSV(p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := full.exportVerdicts(sc.Variants())
	for k := range rows {
		w, g := want[k], rows[k]
		if g.Image != w.Image || g.ParamKey() != w.ParamKey() || g.MapOriginal != w.MapOriginal || g.MapTransformed != w.MapTransformed || g.Violation != w.Violation {
			t.Fatalf("row %d: read %+v, wrote %+v", k, g, w)
		}
	}
}

// Bad detection data sets fail before any work with a clear error.
func TestDetectionBadData(t *testing.T) {
	dir := t.TempDir()
	p := synthCOCO(t, dir, `,
  {"id": 5, "image_id": 22, "category_id": 99, "bbox": [1, 1, 2, 2], "area": 4, "iscrowd": 0}`)
	assets := t.TempDir()
	os.MkdirAll(filepath.Join(assets, "models"), 0o755)
	os.WriteFile(filepath.Join(assets, "models", "d.onnx"), []byte("x"), 0o644)
	doc := strings.NewReplacer("COCOPATH", p).Replace(detConfig)
	cfg, err := parseConfig([]byte(doc), "exp/det.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Prepare(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "data.path") || !strings.Contains(err.Error(), "unknown category_id 99") {
		t.Fatalf("unknown category: %v", err)
	}
}

const detConfig = `name: det
case_study: detection
mode: online
data:
  format: coco
  path: COCOPATH
sut:
  model: models/d.onnx
features:
  kind: none
action_set: hierarchical
agents: [random]
seeds: 1
`

func TestDetectionConfig(t *testing.T) {
	assets := fakeAssets(t)
	os.WriteFile(filepath.Join(assets, "models", "d.onnx"), []byte("x"), 0o644)
	os.MkdirAll(filepath.Join(assets, "coco"), 0o755)
	os.WriteFile(filepath.Join(assets, "coco", "i.json"), []byte("{}"), 0o644)
	base := strings.Replace(detConfig, "COCOPATH", "coco/i.json", 1)
	c, err := parseConfig([]byte(base), "exp/det.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	want := DetectionConfig{ScoreThreshold: 0.005, NMSIoU: 0.45, MaxDetections: 100, Threshold: 0.05}
	if c.SUT.Detection != want || c.SUT.InputWidth != 416 || c.SUT.InputHeight != 416 || c.CaseStudy != "detection" {
		t.Fatalf("defaults: %+v", c.SUT)
	}
	c, err = parseConfig([]byte(strings.Replace(base, "  model: models/d.onnx\n",
		"  model: models/d.onnx\n  input_size: 320\n  score_threshold: 0.25\n  nms_iou: 0.5\n  max_detections: 50\n  threshold: 0.1\n", 1)), "exp/det.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if want := (DetectionConfig{ScoreThreshold: 0.25, NMSIoU: 0.5, MaxDetections: 50, Threshold: 0.1}); c.SUT.Detection != want || c.SUT.InputWidth != 320 {
		t.Fatalf("set: %+v", c.SUT)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"bad threshold", "  model: models/d.onnx\n", "  model: models/d.onnx\n  threshold: -0.1\n", `exp/det.yaml:9:14: sut.threshold: "-0.1" is not a number in [0, 1]`},
		{"nan threshold", "  model: models/d.onnx\n", "  model: models/d.onnx\n  threshold: .nan\n", `sut.threshold: ".nan" is not a number in [0, 1]`},
		{"bad iou", "  model: models/d.onnx\n", "  model: models/d.onnx\n  nms_iou: 2\n", `sut.nms_iou: "2" is not a number in [0, 1]`},
		{"bad top", "  model: models/d.onnx\n", "  model: models/d.onnx\n  max_detections: 0\n", `sut.max_detections: "0" is not an integer in [1,`},
		{"not square", "  model: models/d.onnx\n", "  model: models/d.onnx\n  input_size: [416, 320]\n", `sut.input_size: a detector takes a square letterboxed input; got 416×320`},
		{"mean", "  model: models/d.onnx\n", "  model: models/d.onnx\n  mean: [0, 0, 0]\n", `exp/det.yaml:9:3: sut.mean: applies to case_study classification only; this is a detection experiment`},
		{"layout", "  model: models/d.onnx\n", "  model: models/d.onnx\n  layout: nhwc\n", `sut.layout: applies to case_study classification only; this is a detection experiment`},
		{"not coco", "format: coco\n  path: coco/i.json", "format: cifar10\n  path: cifar10/x.bin", `data.format: "cifar10": a detection experiment needs ground-truth boxes, i.e. format coco`},
	} {
		doc := strings.Replace(base, tc.old, tc.new, 1)
		if doc == base {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/det.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
	// Classification keys given to a classification SUT are still fine,
	// detection keys are not.
	doc := strings.Replace(baseConfig, "  input_size: 224\n", "  input_size: 224\n  threshold: 0.05\n", 1)
	if _, err := parseConfig([]byte(doc), "exp/test.yaml", assets); err == nil || !strings.Contains(err.Error(), "sut.threshold: applies to case_study detection only") {
		t.Errorf("threshold in a classification config: %v", err)
	}
}

// The detection cache line round-trips exactly (float64 APs).
func TestDetectionLineJSON(t *testing.T) {
	l := &detectionJudgement{Image: 3, ID: 139, Map: 0.07297689768976896, Maps: []float64{-1, 0.1 + 0.2, 1}}
	b, _ := json.Marshal(l)
	got, err := (&detectionStudy{}).decode(b)
	if err != nil || !reflect.DeepEqual(got, l) {
		t.Fatalf("%s → %+v, %v", b, got, err)
	}
	if string(b) != `{"image":3,"id":139,"map":0.07297689768976896,"maps":[-1,0.3,1]}` {
		t.Errorf("cache line %s", b)
	}
}

// Prepare refuses a classifier given as the detector, with the reason.
func TestDetectionPrepareRejectsClassifier(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	base := strings.NewReplacer("COCOPATH", "coco_val2017_subset158/instances_val2017_subset158.json",
		"models/d.onnx", "models/cifar10_squeezenet1_1.onnx").Replace(detConfig)
	for _, tc := range []struct{ size, want string }{
		{"", "sut.input_size: the model cifar10_squeezenet1_1.onnx takes 224×224 (width×height) images, but the config says 416×416"},
		{"  input_size: 224\n", "sut.model: cifar10_squeezenet1_1.onnx looks like a classifier (its first output"},
	} {
		doc := strings.Replace(base, "features:", tc.size+"features:", 1)
		cfg, err := parseConfig([]byte(doc), "exp/det.yaml", assets)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Prepare(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v\nwant an error containing %q", err, tc.want)
		}
	}
}

// Fed the reference decoder's pixels of image 22192, the detection
// follow-up path (transform image and ground truth, detect, score, rule)
// reproduces the reference's mAPs and verdicts for all 59 follow-ups
// exactly (shared/golden/detection/mr_22192_results.csv).
func TestDetectionGolden22192(t *testing.T) {
	if testing.Short() {
		t.Skip("runs yolov3-tiny on 60 images")
	}
	assets := sharedpath.ForTest(t, "assets")
	golden := sharedpath.ForTest(t, "golden/detection")
	f, err := os.Open(filepath.Join(golden, "mr_22192_decoded_rgb.png"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := data.DecodeImage(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(assets, "coco_val2017_subset158")
	c, err := data.OpenCOCO(filepath.Join(dir, "instances_val2017_subset158.json"), filepath.Join(dir, "val2017"))
	if err != nil {
		t.Fatal(err)
	}
	var gt []sut.Annotation
	for i := 0; i < c.Len(); i++ {
		cs, err := c.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		if cs.ID == 22192 {
			gt = groundTruth(cs.Annotations)
		}
	}
	if len(gt) == 0 {
		t.Fatal("image 22192 not found")
	}
	det, err := sut.LoadDetector(filepath.Join(assets, "models", "coco_yolov3-tiny.onnx"), sut.DefaultDetectorConfig())
	if err != nil {
		t.Fatal(err)
	}
	d := detection{detector: det, oracle: sut.DetectionOracle{Threshold: 0.05}}
	src, err := det.Detect(img)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(golden, "mr_22192_results.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(want)), "\n")[1:]
	sc := mustScenario(t, "hierarchical")
	rel := mrRelations(t, sc)
	vars := sc.Variants()
	if len(lines) != len(vars) {
		t.Fatalf("%d golden rows, %d follow-ups", len(lines), len(vars))
	}
	for k, v := range vars {
		f := strings.Split(lines[k], ",")
		if key := (record.Verdict{MR: f[0], Param: parseParam(t, f[1])}).ParamKey(); key != v.Key() {
			t.Fatalf("row %d is %s, follow-up %s", k, key, v.Key())
		}
		o, err := d.outcome(img, gt, src, rel[v.Key()])
		if err != nil {
			t.Fatal(err)
		}
		mo, err1 := strconv.ParseFloat(f[2], 64)
		mt, err2 := strconv.ParseFloat(f[3], 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("row %d: %q", k, lines[k])
		}
		if o.OriginalScore != mo || o.ModifiedScore != mt || o.Violated != (f[4] == "1") {
			t.Errorf("%s: got map %v → %v, violated %v; want %s → %s, %s", v.Key(), o.OriginalScore, o.ModifiedScore, o.Violated, f[2], f[3], f[4])
		}
	}
}

// countingCases is a caseSource of n cases of size×size pixels that counts
// its reads.
type countingCases struct {
	n, size int
	reads   map[int]int
}

func (c *countingCases) Len() int { return c.n }
func (c *countingCases) Case(i int) (data.Case, error) {
	c.reads[i]++
	return data.Case{Index: i, Image: rgb.New(c.size, c.size)}, nil
}

// TestCachedCases checks that cachedCases reads a case once, gives the
// same case again, and keeps no more than its budget of pixels: the cases
// past it are read every time.
func TestCachedCases(t *testing.T) {
	side := 4
	per := 3 * side * side
	fit := 5
	src := &countingCases{n: fit + 3, size: side, reads: map[int]int{}}
	c := &cachedCases{caseSource: src, budget: fit*per + per - 1}
	for pass := 0; pass < 3; pass++ {
		for i := 0; i < src.n; i++ {
			cs, err := c.Case(i)
			if err != nil || cs.Index != i {
				t.Fatalf("case %d: %+v, %v", i, cs.Index, err)
			}
		}
	}
	for i := 0; i < src.n; i++ {
		if want := map[bool]int{true: 1, false: 3}[i < fit]; src.reads[i] != want {
			t.Errorf("case %d read %d times, want %d", i, src.reads[i], want)
		}
	}
	if c.bytes != fit*per {
		t.Errorf("cache holds %d bytes, want %d (budget %d)", c.bytes, fit*per, c.budget)
	}
}
