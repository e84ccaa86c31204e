package experiments

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut"
)

// Interrupting a sweep loses no finished image, and the resumed sweep
// computes only the missing ones and ends with the same table as an
// uninterrupted sweep.
func TestSweepResume(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(37)
	full, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	_, err = sweepFake(t, src, sc, cache, fakeClassifier{calls: &calls, after: 15, stop: cancel}, ctx)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "rerun to resume") {
		t.Fatalf("interrupted sweep: err = %v", err)
	}
	first := calls.Load()
	if first < 15 || first >= 37 {
		t.Fatalf("%d classifier calls before the interrupt", first)
	}
	vdir, _ := cacheDir(cache, "verdicts", "v")
	fdir, _ := cacheDir(cache, "features", "f")
	if _, err := os.Stat(filepath.Join(vdir, "table.jsonl")); err == nil {
		t.Fatal("an interrupted sweep wrote a complete table")
	}
	// A kill in the middle of a write leaves a torn last line.
	parts, _ := filepath.Glob(filepath.Join(vdir, "part-*.jsonl"))
	if len(parts) == 0 {
		t.Fatal("no part files after the interrupt")
	}
	f, _ := os.OpenFile(parts[0], os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"image":36,"label":0,"pred":1,"pre`)
	f.Close()

	calls.Store(0)
	var last [2]int
	got, err := sweep(context.Background(), sweepConfig{
		study: fakeStudy(src, func() (classifier, error) { return fakeClassifier{calls: &calls}, nil }), source: src,
		variants: sc.Variants(), relations: fakeRelations(sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     cache, verdictKey: "v", featureKey: "f", workers: 2,
		progress: func(d, n int) { last = [2]int{d, n} },
	})
	if err != nil {
		t.Fatal(err)
	}
	if second := calls.Load(); first+second != 37 {
		// Images finished before the interrupt are not recomputed; the
		// ones in flight at the interrupt may be (≤ workers).
		if first+second > 37+2 || first+second < 37 {
			t.Errorf("%d + %d classifier calls for 37 images", first, second)
		}
	}
	if last != [2]int{37, 37} {
		t.Errorf("progress ended at %v", last)
	}
	if !tablesEqual(t, got, full) {
		t.Fatal("resumed sweep's table differs from an uninterrupted one")
	}
	if parts, _ := filepath.Glob(filepath.Join(vdir, "part-*")); len(parts) != 0 {
		t.Errorf("part files left after consolidation: %v", parts)
	}
	for _, d := range []string{vdir, fdir} {
		if _, err := os.Stat(filepath.Join(d, "table.jsonl")); err != nil {
			t.Error(err)
		}
	}
	// A third run is served from the cache alone.
	calls.Store(0)
	again, err := sweepFake(t, src, sc, cache, fakeClassifier{calls: &calls}, context.Background())
	if err != nil || calls.Load() != 0 || !tablesEqual(t, again, full) {
		t.Fatalf("cached sweep: err %v, %d calls, equal %v", err, calls.Load(), tablesEqual(t, again, full))
	}
	// The table's verdicts are consistent with its predictions.
	rows, err := full.Verdicts(sc.Variants())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 37*59 || rows[59].Image != 1 || rows[5].ParamKey() != "rotation:-90" {
		t.Fatalf("rows: %d, %+v", len(rows), rows[59])
	}
	viol := 0
	for _, r := range rows {
		if r.Violation != (r.PredOriginal != r.PredTransformed) || r.Label != r.Image%3 {
			t.Fatalf("row %+v", r)
		}
		if r.Violation {
			viol++
		}
	}
	if viol == 0 || viol == len(rows) {
		t.Fatalf("degenerate table: %d violations", viol)
	}
}

func TestSweepCacheMismatch(t *testing.T) {
	sc := mustScenario(t, "basic")
	src := newFakeSource(3)
	cache := t.TempDir()
	if _, err := sweepFake(t, src, sc, cache, fakeClassifier{}, context.Background()); err != nil {
		t.Fatal(err)
	}
	// Same key, different table shape: the meta check refuses.
	_, err := sweepFake(t, newFakeSource(4), sc, cache, fakeClassifier{}, context.Background())
	if err == nil || !strings.Contains(err.Error(), "meta.json") {
		t.Fatalf("err = %v", err)
	}
}

func TestReplayEnvErrors(t *testing.T) {
	sc := mustScenario(t, "basic")
	src := newFakeSource(4)
	tab, err := sweepFake(t, src, mustScenario(t, "hierarchical"), t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	if _, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: 3}, sc); err != nil {
		t.Fatal(err)
	}
	nan := append([]float32(nil), tab.Features...)
	nan[7] = float32(math.Inf(1))
	for _, tc := range []struct {
		name  string
		rows  []record.Verdict
		feats []float32
		dim   int
		want  string
	}{
		{"missing row", append(append([]record.Verdict(nil), rows[:12]...), rows[13:]...), tab.Features, 3, "lacks 1 of the 36 rows scenario basic needs over images 0..3, first image 1, grayscale"},
		{"duplicate", append(rows, rows[3]), tab.Features, 3, "two rows for image 0, grayscale"},
		{"ragged", rows, tab.Features[:11], 3, "11 feature values do not divide into rows of 3"},
		{"row count", rows, tab.Features[:9], 3, "3 rows but the verdict table covers images 0..3"},
		{"inf", rows, nan, 3, "feature row 2 (image 2), column 1 is +Inf"},
	} {
		if _, err := NewReplayEnv(tc.rows, tc.feats, bandit.Layout{Dim: tc.dim}, sc); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	// Feature files.
	dir := t.TempDir()
	p := filepath.Join(dir, "f.f32")
	os.WriteFile(p, record.EncodeFeatures(tab.Features), 0o644)
	got, dim, err := record.ReadFeatures(p, 4, 0)
	if err != nil || dim != 3 || !reflect.DeepEqual(got, tab.Features) {
		t.Fatalf("ReadFeatures: %v, dim %d", err, dim)
	}
	os.WriteFile(p, record.EncodeFeatures(tab.Features[:10]), 0o644)
	if _, _, err := record.ReadFeatures(p, 4, 0); err == nil || !strings.Contains(err.Error(), "10 float32 values, which do not divide into 4 rows") {
		t.Errorf("ReadFeatures ragged: %v", err)
	}
	if _, _, err := record.ReadFeatures(p, 4, 5); err == nil || !strings.Contains(err.Error(), "2 rows of 5, but the verdict table has 4 images") {
		t.Errorf("ReadFeatures rows: %v", err)
	}
	os.WriteFile(p, []byte{1, 2, 3}, 0o644)
	if _, _, err := record.ReadFeatures(p, 4, 0); err == nil || !strings.Contains(err.Error(), "3 bytes") {
		t.Errorf("ReadFeatures bytes: %v", err)
	}
}

// tableText renders a table: its size, every row as the verdict CSV shows
// it (all the case study's columns) and its features. (reflect.DeepEqual
// fails on the NaN parameters of unparameterised variants and the NaN APs
// of classification rows.)
func tableText(t *testing.T, tab *Table) string {
	t.Helper()
	rows, err := tab.exportVerdicts(tab.Variants)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d images, %d-d features %v\n", tab.Images, tab.Dim, tab.Features)
	if err := record.EncodeVerdictsCSV(&b, rows, tab.study.name() == studyDetection); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// tablesEqual compares tables by their text.
func tablesEqual(t *testing.T, a, b *Table) bool {
	t.Helper()
	return tableText(t, a) == tableText(t, b)
}

// A limited sweep fills the cache of the whole data set: a later full sweep
// computes only the rest, and the limited table is a prefix of the full one.
func TestSweepLimitSharesCache(t *testing.T) {
	sc := mustScenario(t, "basic")
	src := newFakeSource(12)
	cache := t.TempDir()
	var calls atomic.Int64
	run := func(limit int) *Table {
		t.Helper()
		tab, err := sweep(context.Background(), sweepConfig{
			study: fakeStudy(src, func() (classifier, error) { return fakeClassifier{calls: &calls}, nil }), source: src,
			limit: limit, variants: sc.Variants(), relations: fakeRelations(sc),
			newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
			cacheDir:     cache, verdictKey: "v", featureKey: "f", workers: 2,
		})
		if err != nil {
			t.Fatal(err)
		}
		return tab
	}
	small := run(5)
	if calls.Load() != 5 || small.Images != 5 || len(small.judged) != 5 || len(small.Features) != 5*3 {
		t.Fatalf("limited sweep: %d calls, %d images", calls.Load(), small.Images)
	}
	full := run(0)
	if calls.Load() != 12 || full.Images != 12 {
		t.Fatalf("full sweep after a limited one: %d calls in all, %d images", calls.Load(), full.Images)
	}
	prefix := func(tab *Table, n int) []record.Verdict {
		rows, err := tab.Verdicts(sc.Variants())
		if err != nil {
			t.Fatal(err)
		}
		for k := range rows {
			rows[k].MapOriginal, rows[k].MapTransformed, rows[k].Param = 0, 0, 0 // NaN ≠ NaN
		}
		return rows[:n*9]
	}
	if !reflect.DeepEqual(prefix(small, 5), prefix(full, 5)) || !reflect.DeepEqual(small.Features, full.Features[:5*3]) {
		t.Fatal("the limited table is not a prefix of the full one")
	}
	if again := run(7); calls.Load() != 12 || !reflect.DeepEqual(prefix(again, 7), prefix(full, 7)) {
		t.Fatalf("limited sweep after the full one recomputed (%d calls)", calls.Load())
	}
}

// The grey-box blocks live in a cache table of their own: a sweep with
// them leaves the verdict and feature caches byte-identical to a sweep
// without them, costs one classification per image on top of a cached
// sweep, and is served from the cache the next time; the blocks are the
// classifier's answer on each source image alone.
func TestSweepSutCacheSeparate(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(9)
	plain := t.TempDir()
	if _, err := sweepFake(t, src, sc, plain, fakeClassifier{}, context.Background()); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	if _, err := sweepFake(t, src, sc, cache, fakeClassifier{}, context.Background()); err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	tab, err := sweepFakeSut(t, src, sc, cache, fakeClassifier{calls: &calls}, context.Background(), true)
	if err != nil {
		t.Fatal(err)
	}
	// The fake study does not know its class count: one call on image 0
	// learns the block's length.
	if calls.Load() != 1+9 {
		t.Errorf("grey-box pass on a cached sweep: %d classifier calls, want 1 + 9 (one per image)", calls.Load())
	}
	for _, pat := range []string{"verdicts-*/table.jsonl", "features-*/table.jsonl", "verdicts-*/meta.json", "features-*/meta.json"} {
		a, _ := filepath.Glob(filepath.Join(plain, pat))
		b, _ := filepath.Glob(filepath.Join(cache, pat))
		if len(a) != 1 || len(b) != 1 || filepath.Base(filepath.Dir(a[0])) != filepath.Base(filepath.Dir(b[0])) {
			t.Fatalf("%s: %v and %v", pat, a, b)
		}
		x, _ := os.ReadFile(a[0])
		y, _ := os.ReadFile(b[0])
		if string(x) != string(y) {
			t.Errorf("%s differs with the grey-box blocks", pat)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(cache, "sut-*", "table.jsonl")); len(m) != 1 {
		t.Fatalf("sut cache tables: %v", m)
	}
	g, dim, err := tab.SutFeatures()
	if err != nil || dim != 4 || len(g) != 9*4 {
		t.Fatalf("SutFeatures: %d values of %d, %v", len(g), dim, err)
	}
	for i := 0; i < 9; i++ {
		img, _, _ := src.Image(i)
		p, _ := fakeClassifier{}.Classify([]rgb.Image{img})
		want, _ := classSutFeatures(p[0].Logits)
		if !reflect.DeepEqual(g[i*4:(i+1)*4], want) {
			t.Errorf("image %d: block %v, want %v", i, g[i*4:(i+1)*4], want)
		}
	}
	calls.Store(0)
	again, err := sweepFakeSut(t, src, sc, cache, fakeClassifier{calls: &calls}, context.Background(), true)
	if err != nil || calls.Load() != 1 {
		t.Fatalf("cached grey-box blocks: err %v, %d calls, want 1 (the length)", err, calls.Load())
	}
	if g2, _, _ := again.SutFeatures(); !reflect.DeepEqual(g2, g) {
		t.Error("cached blocks differ")
	}
	if _, _, err := (&Table{}).SutFeatures(); err == nil {
		t.Error("a table without blocks gave blocks")
	}
}

// batchRecorder is a fakeClassifier that records the size of every call.
type batchRecorder struct {
	fakeClassifier
	sizes *[]int
}

func (b batchRecorder) Classify(imgs []rgb.Image) ([]sut.Prediction, error) {
	*b.sizes = append(*b.sizes, len(imgs))
	return b.fakeClassifier.Classify(imgs)
}

// TestClassJudgeBoundsBatches: the sweep classifies a small image with its
// follow-ups in one call, and a large one a few (or one) at a time, with
// the same classes as one call would give.
func TestClassJudgeBoundsBatches(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	vars := sc.Variants()
	rel := fakeRelations(sc)
	for _, tc := range []struct {
		w, h     int
		maxBatch int
	}{{4, 4, len(vars) + 1}, {700, 600, sweepBatchPixels / (700 * 600)}, {1500, 1400, 1}} {
		img := rgb.New(tc.w, tc.h)
		for k := range img.Pix {
			img.Pix[k] = uint8(k * 7 % 251)
		}
		src := &fakeSource{imgs: []rgb.Image{img}}
		var sizes []int
		j := &classJudge{src: src, cls: batchRecorder{sizes: &sizes}}
		got, _, err := j.judge(context.Background(), 0, vars, rel)
		if err != nil {
			t.Fatal(err)
		}
		all := []rgb.Image{img}
		for _, v := range vars {
			all = append(all, rel[v.Key()].Apply(img))
		}
		wantPreds, _ := fakeClassifier{}.Classify(all)
		want := make([]int, len(wantPreds))
		for k, p := range wantPreds {
			want[k] = p.Class
		}
		cj := got.(*classJudgement)
		if cj.Pred != want[0] || !reflect.DeepEqual(cj.Preds, want[1:]) {
			t.Errorf("%d×%d: classes differ from one call's", tc.w, tc.h)
		}
		total := 0
		for _, n := range sizes {
			total += n
			if n > tc.maxBatch {
				t.Errorf("%d×%d: a call of %d images, want at most %d", tc.w, tc.h, n, tc.maxBatch)
			}
		}
		if total != len(vars)+1 || (tc.maxBatch == len(vars)+1 && len(sizes) != 1) {
			t.Errorf("%d×%d: calls %v", tc.w, tc.h, sizes)
		}
		for k, im := range j.batch[:cap(j.batch)] {
			if im.Pix != nil {
				t.Errorf("%d×%d: the judge keeps image %d of its last batch", tc.w, tc.h, k)
				break
			}
		}
	}
}

// A damaged line in the middle of a cache file is an error that names the
// file and line and says what to delete; after deleting the file the sweep
// computes its images again and ends with the same table.
func TestSweepDamagedCache(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(5)
	cache := t.TempDir()
	full, err := sweepFake(t, src, sc, cache, fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	vdir, _ := cacheDir(cache, "verdicts", "v")
	table := filepath.Join(vdir, "table.jsonl")
	b, err := os.ReadFile(table)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(table, append([]byte("{oops\n"), b...), 0o644)
	_, err = sweepFake(t, src, sc, cache, fakeClassifier{}, context.Background())
	if err == nil || !strings.Contains(err.Error(), "sweep: cache file "+table+":1 is damaged: ") ||
		!strings.Contains(err.Error(), "; delete the file (the sweep computes its images again) or the table's folder "+vdir) {
		t.Fatalf("damaged cache: %v", err)
	}
	os.Remove(table)
	again, err := sweepFake(t, src, sc, cache, fakeClassifier{}, context.Background())
	if err != nil || !tablesEqual(t, again, full) {
		t.Fatalf("after deleting the damaged file: %v", err)
	}
}
