package detect

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/sut/coco"
)

// tinyHeads splits a golden heads file into yolov3-tiny's two heads.
func tinyHeads(t testing.TB, data []float32) []Head {
	t.Helper()
	n0 := 255 * 13 * 13
	if len(data) != n0+255*26*26 {
		t.Fatalf("heads file has %d floats, want %d", len(data), n0+255*26*26)
	}
	return []Head{
		{Name: "head0", Shape: []int{1, 255, 13, 13}, Data: data[:n0]},
		{Name: "head1", Shape: []int{1, 255, 26, 26}, Data: data[n0:]},
	}
}

func relClose(got, want, rel float64) bool {
	return math.Abs(got-want) <= rel*math.Max(1, math.Abs(want))
}

// CompareDetections checks got against golden detections: same count,
// order and categories; scores and boxes to rel·max(1,|v|).
func compareDetections(t *testing.T, got, want []coco.Detection, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d detections, want %d", len(got), len(want))
	}
	bad := 0
	maxRel := 0.0
	for i := range want {
		g, w := got[i], want[i]
		for _, p := range [][2]float64{{g.Score, w.Score}, {g.Box.X, w.Box.X}, {g.Box.Y, w.Box.Y}, {g.Box.W, w.Box.W}, {g.Box.H, w.Box.H}} {
			maxRel = math.Max(maxRel, math.Abs(p[0]-p[1])/math.Max(1, math.Abs(p[1])))
		}
		ok := g.CategoryID == w.CategoryID && relClose(g.Score, w.Score, rel) &&
			relClose(g.Box.X, w.Box.X, rel) && relClose(g.Box.Y, w.Box.Y, rel) &&
			relClose(g.Box.W, w.Box.W, rel) && relClose(g.Box.H, w.Box.H, rel)
		if !ok {
			bad++
			if bad <= 5 {
				t.Errorf("detection %d: got %+v, want %+v", i, g, w)
			}
		}
	}
	if bad > 5 {
		t.Errorf("... %d detections differ in all", bad)
	}
	t.Logf("%d detections, max relative difference %.3g", len(want), maxRel)
}

func goldenDets(t testing.TB, path string) []coco.Detection {
	rows := goldentest.ReadCSV(t, path)
	var out []coco.Detection
	for _, r := range rows.Records {
		v := goldentest.Floats(t, path, r)
		d := coco.Detection{CategoryID: int(v[1]), Score: v[2]}
		d.Box.X, d.Box.Y, d.Box.W, d.Box.H = v[3], v[4], v[5], v[6]
		out = append(out, d)
	}
	return out
}

// TestGoldenDecode decodes the golden ONNX Runtime heads of the three
// pipeline images and compares with the reference detections.
func TestGoldenDecode(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	info := goldentest.ReadImages(t, dir)
	cats := COCOCategoryIDs()
	if fmt.Sprint(cats) != fmt.Sprint(info.ClassIndexToCategoryID) {
		t.Fatalf("COCOCategoryIDs = %v, want %v", cats, info.ClassIndexToCategoryID)
	}
	for _, im := range info.Images {
		t.Run(fmt.Sprint(im.ImageID), func(t *testing.T) {
			lb := im.Letterbox
			geom := Geometry{W: im.Width, H: im.Height, DX: float64(lb.DX), DY: float64(lb.DY), ScaleX: lb.R, ScaleY: lb.R}
			heads := tinyHeads(t, goldentest.ReadF32(t, filepath.Join(dir, fmt.Sprintf("img_%d_heads.f32", im.ImageID))))
			cfg := DefaultConfig()
			cands, err := YOLOv3Tiny().Decode(nil, heads, cfg.ScoreThreshold)
			if err != nil {
				t.Fatal(err)
			}
			got, err := Postprocess(cands, cfg, geom, cats)
			if err != nil {
				t.Fatal(err)
			}
			want := goldenDets(t, filepath.Join(dir, fmt.Sprintf("img_%d_dets.csv", im.ImageID)))
			if len(want) != im.NDets {
				t.Fatalf("golden has %d rows, images.json says %d", len(want), im.NDets)
			}
			compareDetections(t, got, want, 1e-9)
		})
	}
}

// TestPostprocess checks NMS, ordering, top-K, the inverse letterbox and
// clipping on hand-made candidates.
func TestPostprocess(t *testing.T) {
	geom := Geometry{W: 100, H: 50, DX: 0, DY: 10, ScaleX: 2, ScaleY: 2}
	cats := []int{1, 2, 3}
	cands := []Candidate{
		{0, 10, 20, 30, 0, 0.5},    // class 0, kept
		{1, 11, 21, 31, 0, 0.6},    // class 0, higher, overlaps (IoU > .45): kept first, suppresses the 0.5
		{0, 10, 20, 30, 1, 0.5},    // class 1: NMS is per class, kept
		{100, 10, 120, 30, 0, 0.6}, // class 0, no overlap, ties with the 0.6: keeps candidate order
		{-10, 0, 300, 200, 2, 0.9}, // class 2, clipped to the image
		{0, 10, 20, 30, 2, 0.004},  // below the threshold
		{50, 50, 50, 60, 1, 0.3},   // zero width: kept
	}
	got, err := Postprocess(cands, DefaultConfig(), geom, cats)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"3 0.9 [0 0 100 50]",
		"1 0.6 [0.5 0.5 10 10]",
		"1 0.6 [50 0 10 10]",
		"2 0.5 [0 0 10 10]",
		"2 0.3 [25 20 0 5]",
	}
	var s []string
	for _, d := range got {
		s = append(s, fmt.Sprintf("%d %v [%v %v %v %v]", d.CategoryID, d.Score, d.Box.X, d.Box.Y, d.Box.W, d.Box.H))
	}
	if strings.Join(s, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(s, "\n"), strings.Join(want, "\n"))
	}
	cfg := DefaultConfig()
	cfg.MaxDetections = 2
	got, err = Postprocess(cands, cfg, geom, cats)
	if err != nil || len(got) != 2 || got[1].Box.X != 0.5 {
		t.Errorf("MaxDetections 2: got %+v, %v", got, err)
	}
	// IoU exactly at the threshold is not suppressed (strictly greater).
	a := Candidate{0, 0, 10, 10, 0, 0.9}
	b := Candidate{0, 0, 10, 5, 0, 0.8} // IoU 0.5
	cfg = DefaultConfig()
	cfg.IoUThreshold = 0.5
	if got, _ := Postprocess([]Candidate{a, b}, cfg, Geometry{W: 10, H: 10, ScaleX: 1, ScaleY: 1}, cats); len(got) != 2 {
		t.Errorf("IoU == threshold: %d detections, want 2", len(got))
	}
	cfg.IoUThreshold = 0.49
	if got, _ := Postprocess([]Candidate{a, b}, cfg, Geometry{W: 10, H: 10, ScaleX: 1, ScaleY: 1}, cats); len(got) != 1 {
		t.Errorf("IoU > threshold: %d detections, want 1", len(got))
	}
}

func TestErrors(t *testing.T) {
	good := Geometry{W: 10, H: 10, ScaleX: 1, ScaleY: 1}
	for name, f := range map[string]func() error{
		"class out of range": func() error {
			_, err := Postprocess([]Candidate{{Class: 3, Score: 1}}, DefaultConfig(), good, []int{1, 2, 3})
			return err
		},
		"bad geometry": func() error {
			_, err := Postprocess(nil, DefaultConfig(), Geometry{W: 10, H: 10}, []int{1})
			return err
		},
		"bad config": func() error {
			c := DefaultConfig()
			c.MaxDetections = 0
			_, err := Postprocess(nil, c, good, []int{1})
			return err
		},
		"wrong head count": func() error {
			_, err := YOLOv3Tiny().Decode(nil, []Head{{Shape: []int{1, 255, 13, 13}, Data: make([]float32, 255*169)}}, 0.005)
			return err
		},
		"wrong head shape": func() error {
			_, err := YOLOv3Tiny().Decode(nil, []Head{{Name: "head0", Shape: []int{1, 254, 13, 13}, Data: make([]float32, 254*169)}, {Shape: []int{1, 255, 26, 26}, Data: make([]float32, 255*676)}}, 0.005)
			return err
		},
		"short data": func() error {
			_, err := YOLOv3Tiny().Decode(nil, []Head{{Shape: []int{1, 255, 13, 13}, Data: make([]float32, 10)}, {Shape: []int{1, 255, 26, 26}, Data: make([]float32, 255*676)}}, 0.005)
			return err
		},
		"NaN objectness": func() error {
			d := make([]float32, 255*169)
			d[4*169] = float32(math.NaN())
			_, err := YOLOv3Tiny().Decode(nil, []Head{{Shape: []int{1, 255, 13, 13}, Data: d}, {Shape: []int{1, 255, 26, 26}, Data: make([]float32, 255*676)}}, 0.005)
			return err
		},
	} {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestDecodeOrder checks the candidate order and formulas on a tiny
// one-head, one-anchor, two-class model.
func TestDecodeOrder(t *testing.T) {
	y := YOLO{Heads: []YOLOHead{{Stride: 10, Anchors: [][2]float64{{4, 6}}}}, Classes: 2}
	// Shape [1, 7, 1, 2]: two cells. Channel-major.
	data := []float32{
		0, 0, // tx
		0, 0, // ty
		0, float32(math.Log(2)), // tw
		0, 0, // th
		10, 10, // obj
		10, -10, // class 0
		10, 10, // class 1
	}
	got, err := y.Decode(nil, []Head{{Shape: []int{1, 7, 1, 2}, Data: data}}, 0.01)
	if err != nil {
		t.Fatal(err)
	}
	s := sigmoid(10) * sigmoid(10)
	bw := 4 * math.Exp(float64(float32(math.Log(2)))) // ≈ 8
	want := []Candidate{
		// cell 0: centre (5, 5), size 4×6
		{3, 2, 7, 8, 0, s},
		{3, 2, 7, 8, 1, s},
		// cell 1: centre (15, 5), size ≈8×6; class 0 scores σ(10)·σ(−10) < 0.01
		{15 - bw/2, 2, 15 + bw/2, 8, 1, s},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d candidates %+v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("candidate %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
}

func BenchmarkDecodeNMS(b *testing.B) {
	dir := sharedpath.ForTest(b, "golden/detection")
	heads := tinyHeads(b, goldentest.ReadF32(b, filepath.Join(dir, "img_92660_heads.f32")))
	geom := Geometry{W: 640, H: 427, DY: 69, ScaleX: 0.65, ScaleY: 0.65}
	cats := COCOCategoryIDs()
	cfg := DefaultConfig()
	y := YOLOv3Tiny()
	var cands []Candidate
	for b.Loop() {
		var err error
		cands, err = y.Decode(cands[:0], heads, cfg.ScoreThreshold)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Postprocess(cands, cfg, geom, cats); err != nil {
			b.Fatal(err)
		}
	}
}
