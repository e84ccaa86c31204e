package coco

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

type apCasesFile struct {
	IoUThrs []float64 `json:"iouThrs"`
	RecThrs []float64 `json:"recThrs"`
	Cases   []struct {
		Name string `json:"name"`
		GT   []struct {
			Area       float64    `json:"area"`
			BBox       [4]float64 `json:"bbox"`
			CategoryID int        `json:"category_id"`
			ID         int64      `json:"id"`
			IsCrowd    int        `json:"iscrowd"`
		} `json:"gt"`
		Dets  [][6]float64 `json:"dets"`
		MAP   float64      `json:"map"`
		MAP50 float64      `json:"map50"`
		MAP75 float64      `json:"map75"`
	} `json:"cases"`
}

func loadAPCases(t *testing.T) apCasesFile {
	t.Helper()
	dir := sharedpath.ForTest(t, "golden/detection")
	b, err := os.ReadFile(filepath.Join(dir, "ap_cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f apCasesFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("ap_cases.json: %v", err)
	}
	if len(f.Cases) != 28 {
		t.Fatalf("ap_cases.json: %d cases, want 28", len(f.Cases))
	}
	return f
}

func TestDefaultThresholdsMatchNumpy(t *testing.T) {
	f := loadAPCases(t)
	p := DefaultParams()
	check := func(name string, got, want []float64) {
		if len(got) != len(want) {
			t.Fatalf("%s: %d values, want %d", name, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s[%d] = %v, want %v (bit-exact)", name, i, got[i], want[i])
			}
		}
	}
	check("IoUThresholds", p.IoUThresholds, f.IoUThrs)
	check("RecallThresholds", p.RecallThresholds, f.RecThrs)
	if p.IoUThresholds[8] != 0.8999999999999999 {
		t.Errorf("IoUThresholds[8] = %v, want 0.8999999999999999", p.IoUThresholds[8])
	}
}

// TestAPCases checks all 28 synthetic pycocotools cases bit for bit.
func TestAPCases(t *testing.T) {
	f := loadAPCases(t)
	for _, c := range f.Cases {
		t.Run(c.Name, func(t *testing.T) {
			var gt []Annotation
			for _, g := range c.GT {
				gt = append(gt, Annotation{ID: g.ID, CategoryID: g.CategoryID,
					Box: rgb.Box{X: g.BBox[0], Y: g.BBox[1], W: g.BBox[2], H: g.BBox[3]}, Area: g.Area, IsCrowd: g.IsCrowd != 0})
			}
			var dets []Detection
			for _, d := range c.Dets {
				dets = append(dets, Detection{CategoryID: int(d[0]), Score: d[1], Box: rgb.Box{X: d[2], Y: d[3], W: d[4], H: d[5]}})
			}
			s, err := EvaluateImage(gt, dets, DefaultParams())
			if err != nil {
				t.Fatal(err)
			}
			if s.AP != c.MAP || s.AP50 != c.MAP50 || s.AP75 != c.MAP75 {
				t.Errorf("got AP/AP50/AP75 %v/%v/%v, want %v/%v/%v (bit-exact)", s.AP, s.AP50, s.AP75, c.MAP, c.MAP50, c.MAP75)
			}
			ap, err := ImageAP(gt, dets)
			if err != nil || ap != s.AP {
				t.Errorf("ImageAP = %v, %v; want %v", ap, err, s.AP)
			}
		})
	}
}

// instancesGT reads the subset's annotations for the given images, in file order.
func instancesGT(t testing.TB, ids ...int) map[int][]Annotation {
	t.Helper()
	dir := sharedpath.ForTest(t, "assets/coco_val2017_subset158")
	b, err := os.ReadFile(filepath.Join(dir, "instances_val2017_subset158.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Annotations []struct {
			ID         int64      `json:"id"`
			ImageID    int        `json:"image_id"`
			CategoryID int        `json:"category_id"`
			BBox       [4]float64 `json:"bbox"`
			Area       float64    `json:"area"`
			IsCrowd    int        `json:"iscrowd"`
		} `json:"annotations"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	want := map[int]bool{}
	for _, id := range ids {
		want[id] = true
	}
	out := map[int][]Annotation{}
	for _, a := range f.Annotations {
		if want[a.ImageID] {
			out[a.ImageID] = append(out[a.ImageID], Annotation{ID: a.ID, CategoryID: a.CategoryID,
				Box: rgb.Box{X: a.BBox[0], Y: a.BBox[1], W: a.BBox[2], H: a.BBox[3]}, Area: a.Area, IsCrowd: a.IsCrowd != 0})
		}
	}
	return out
}

func readDets(t testing.TB, path string, keyCols int) map[string][]Detection {
	t.Helper()
	rows := goldentest.ReadCSV(t, path)
	out := map[string][]Detection{}
	for _, r := range rows.Records {
		key := r[0]
		for i := 1; i < keyCols; i++ {
			key += "," + r[i]
		}
		v := goldentest.Floats(t, path, r[keyCols:])
		out[key] = append(out[key], Detection{CategoryID: int(v[0]), Score: v[1], Box: rgb.Box{X: v[2], Y: v[3], W: v[4], H: v[5]}})
	}
	return out
}

// TestAPOriginal scores the golden detections of the three pipeline images
// against their annotations (one image has a crowd region).
func TestAPOriginal(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	want := goldentest.ReadCSV(t, filepath.Join(dir, "ap_original.csv"))
	gt := instancesGT(t, 92660, 802, 22192)
	for _, r := range want.Records {
		v := goldentest.Floats(t, "ap_original.csv", r)
		id := int(v[0])
		dets := readDets(t, filepath.Join(dir, "img_"+r[0]+"_dets.csv"), 1)[r[0]]
		if len(dets) != int(v[4]) {
			t.Fatalf("image %d: %d detections, want %v", id, len(dets), v[4])
		}
		s, err := EvaluateImage(gt[id], dets, DefaultParams())
		if err != nil {
			t.Fatal(err)
		}
		if s.AP != v[1] || s.AP50 != v[2] || s.AP75 != v[3] {
			t.Errorf("image %d: AP/AP50/AP75 %v/%v/%v, want %v/%v/%v (bit-exact)", id, s.AP, s.AP50, s.AP75, v[1], v[2], v[3])
		}
	}
}

// TestMR22192 evaluates the detections on all 59 transformed versions of
// image 22192 against the transformed ground truth and checks the golden
// per-image APs and verdicts bit for bit.
func TestMR22192(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	dets := readDets(t, filepath.Join(dir, "mr_22192_dets.csv"), 2)
	gtRows := goldentest.ReadCSV(t, filepath.Join(dir, "mr_22192_gt.csv"))
	gt := map[string][]Annotation{}
	for _, r := range gtRows.Records {
		v := goldentest.Floats(t, "mr_22192_gt.csv", r[2:])
		gt[r[0]+","+r[1]] = append(gt[r[0]+","+r[1]], Annotation{ID: int64(v[0]), CategoryID: int(v[1]), IsCrowd: v[2] != 0,
			Box: rgb.Box{X: v[3], Y: v[4], W: v[5], H: v[6]}})
	}
	orig, err := ImageAP(gt["none,"], dets["none,"])
	if err != nil {
		t.Fatal(err)
	}
	res := goldentest.ReadCSV(t, filepath.Join(dir, "mr_22192_results.csv"))
	if len(res.Records) != 59 {
		t.Fatalf("%d result rows, want 59", len(res.Records))
	}
	for _, r := range res.Records {
		key := r[0] + "," + r[1]
		v := goldentest.Floats(t, "mr_22192_results.csv", r[2:6])
		if orig != v[0] {
			t.Errorf("%s: map_original %v, want %v", key, orig, v[0])
		}
		if len(dets[key]) != int(v[3]) {
			t.Errorf("%s: %d detections, want %v", key, len(dets[key]), v[3])
		}
		ap, err := ImageAP(gt[key], dets[key])
		if err != nil {
			t.Fatal(err)
		}
		if ap != v[1] {
			t.Errorf("%s: map_transformed %v, want %v (bit-exact)", key, ap, v[1])
		}
		if viol := ap < orig-0.05; viol != (v[2] != 0) {
			t.Errorf("%s: violation %v, want %v", key, viol, v[2] != 0)
		}
	}
}

func TestEdgeCases(t *testing.T) {
	box := rgb.Box{X: 10, Y: 20, W: 100, H: 80}
	far := rgb.Box{X: 500, Y: 500, W: 10, H: 10}
	perfect := 0.9999999999999998 // 1/(1+ε), as pycocotools
	tests := []struct {
		name string
		gt   []Annotation
		dets []Detection
		want float64
	}{
		{"no annotations, no detections", nil, nil, -1},
		{"no annotations, detections", nil, []Detection{{1, 0.9, box}}, -1},
		{"crowd-only GT", []Annotation{{ID: 1, CategoryID: 1, Box: box, IsCrowd: true}}, []Detection{{1, 0.9, box}}, -1},
		{"no detections", []Annotation{{ID: 1, CategoryID: 1, Box: box}}, nil, 0},
		{"perfect", []Annotation{{ID: 1, CategoryID: 1, Box: box}}, []Detection{{1, 0.9, box}}, perfect},
		{"wrong category costs nothing", []Annotation{{ID: 1, CategoryID: 1, Box: box}},
			[]Detection{{2, 0.99, box}, {1, 0.9, box}}, perfect},
		{"zero-area detection never matches", []Annotation{{ID: 1, CategoryID: 1, Box: box}},
			[]Detection{{1, 0.9, rgb.Box{X: 10, Y: 20, W: 0, H: 80}}}, 0},
		{"zero-area detection inside crowd is a FP", []Annotation{{ID: 1, CategoryID: 1, Box: box}, {ID: 2, CategoryID: 1, Box: far, IsCrowd: true}},
			[]Detection{{1, 0.95, rgb.Box{X: 501, Y: 501, W: 0, H: 5}}, {1, 0.9, box}}, 0.5},
		{"detection in crowd region is ignored", []Annotation{{ID: 1, CategoryID: 1, Box: box}, {ID: 2, CategoryID: 1, Box: far, IsCrowd: true}},
			[]Detection{{1, 0.95, rgb.Box{X: 501, Y: 501, W: 5, H: 5}}, {1, 0.9, box}}, perfect},
		{"GT area outside range is ignored", []Annotation{{ID: 1, CategoryID: 1, Box: box}, {ID: 2, CategoryID: 1, Box: far, Area: 2e10}},
			[]Detection{{1, 0.9, box}}, perfect},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ImageAP(tc.gt, tc.dets)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("ImageAP = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	gt := []Annotation{{ID: 7, CategoryID: 1, Box: rgb.Box{X: 0, Y: 0, W: 1, H: 1}}}
	if _, err := ImageAP(gt, []Detection{{1, math.NaN(), rgb.Box{W: 1, H: 1}}}); err == nil {
		t.Error("NaN score: no error")
	}
	if _, err := ImageAP(gt, []Detection{{1, 0.5, rgb.Box{W: math.Inf(1), H: 1}}}); err == nil {
		t.Error("infinite box: no error")
	}
	if _, err := ImageAP([]Annotation{{ID: 7, CategoryID: 1, Box: rgb.Box{X: math.NaN()}}}, nil); err == nil {
		t.Error("NaN GT box: no error")
	}
	bad := DefaultParams()
	bad.MaxDetections = 0
	if _, err := EvaluateImage(gt, nil, bad); err == nil {
		t.Error("MaxDetections 0: no error")
	}
	bad = DefaultParams()
	bad.RecallThresholds = []float64{0.5, 0.2}
	if _, err := NewEvaluator(bad); err == nil {
		t.Error("descending recall thresholds: no error")
	}
	e, _ := NewEvaluator(DefaultParams())
	if err := e.Add(3, gt, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Add(3, gt, nil); err == nil {
		t.Error("image added twice: no error")
	}
}

// TestEvaluatorDataset checks the cross-image accumulation by hand: two
// images, one GT each; image 1's detection is exact (score 0.9), image 2's
// misses (score 0.8). Sorted: TP, FP; npig = 2, so precision 1/(1+ε) up to
// recall 0.5 (51 of 101 recall points) and 0 above, at every threshold.
func TestEvaluatorDataset(t *testing.T) {
	box := rgb.Box{X: 10, Y: 20, W: 100, H: 80}
	miss := rgb.Box{X: 300, Y: 300, W: 50, H: 50}
	e, err := NewEvaluator(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	// Added out of order on purpose: accumulation follows ascending ids.
	if err := e.Add(2, []Annotation{{ID: 2, CategoryID: 5, Box: box}}, []Detection{{5, 0.8, miss}}); err != nil {
		t.Fatal(err)
	}
	if err := e.Add(1, []Annotation{{ID: 1, CategoryID: 5, Box: box}}, []Detection{{5, 0.9, box}}); err != nil {
		t.Fatal(err)
	}
	s := e.Stats()
	want := 51 * 0.9999999999999998 / 101
	for name, got := range map[string]float64{"AP": s.AP, "AP50": s.AP50, "AP75": s.AP75} {
		if math.Abs(got-want) > 1e-15 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// Per image the same data give 1/(1+ε) and 0.
	for id, want := range map[int]float64{1: 0.9999999999999998, 2: 0} {
		var gt []Annotation
		var dets []Detection
		if id == 1 {
			gt, dets = []Annotation{{ID: 1, CategoryID: 5, Box: box}}, []Detection{{5, 0.9, box}}
		} else {
			gt, dets = []Annotation{{ID: 2, CategoryID: 5, Box: box}}, []Detection{{5, 0.8, miss}}
		}
		if got, _ := ImageAP(gt, dets); got != want {
			t.Errorf("image %d alone: AP %v, want %v", id, got, want)
		}
	}
}

// TestSumPairwise checks the summation order on values where it matters:
// with 0.1 repeated, the left-to-right sum and the pairwise sum differ.
func TestSumPairwise(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 9, 16, 127, 128, 129, 1010, 8192, 9090, 20000} {
		x := make([]float64, n)
		for i := range x {
			x[i] = 0.1 * float64(i%7+1)
		}
		// Reference: a direct transcription of numpy's recursion and blocking.
		var ref func(a []float64) float64
		ref = func(a []float64) float64 {
			if len(a) < 8 {
				s := 0.0
				for _, v := range a {
					s += v
				}
				return s
			}
			if len(a) <= 128 {
				var r [8]float64
				for i := 0; i < len(a)/8*8; i++ {
					r[i%8] += a[i]
				}
				s := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
				for i := len(a) / 8 * 8; i < len(a); i++ {
					s += a[i]
				}
				return s
			}
			h := len(a) / 2
			h -= h % 8
			return ref(a[:h]) + ref(a[h:])
		}
		want := 0.0
		for i := 0; i < n; i += 8192 {
			want += ref(x[i:min(n, i+8192)])
		}
		if got := Sum(x); got != want {
			t.Errorf("n=%d: Sum = %v, want %v", n, got, want)
		}
	}
	// A known value: numpy.sum([0.1]*10) == 1.0 (pairwise), while the
	// left-to-right sum is 0.9999999999999999.
	x := []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}
	if got := Sum(x); got != 1.0 {
		t.Errorf("Sum([0.1]*10) = %v, want 1 (numpy)", got)
	}
}

func BenchmarkImageAP(b *testing.B) {
	dir := sharedpath.ForTest(b, "golden/detection")
	gt := instancesGT(b, 92660)[92660]
	dets := readDets(b, filepath.Join(dir, "img_92660_dets.csv"), 1)["92660"]
	b.ResetTimer()
	for b.Loop() {
		if _, err := ImageAP(gt, dets); err != nil {
			b.Fatal(err)
		}
	}
}
