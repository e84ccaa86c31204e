package experiments

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// SweepConfig describes an exhaustive sweep: every follow-up of every
// source image through the classifier, plus every image's context
// features.
type SweepConfig struct {
	Source Source
	// Variants are the follow-ups of every image, in table column order.
	Variants []scenario.Variant
	// Relations maps each variant's Key to its relation.
	Relations map[string]Relation
	// NewClassifier makes the classifier of one worker (each worker has its
	// own, so implementations need not be safe for concurrent use).
	NewClassifier func() (Classifier, error)
	// NewExtractor makes the feature extractor of one worker; nil for an
	// experiment without context features.
	NewExtractor func() (Extractor, error)
	// CacheDir holds the cached tables. The verdicts live in
	// CacheDir/verdicts-<hash of VerdictKey>, the features in
	// CacheDir/features-<hash of FeatureKey>, so a feature ablation reuses
	// the verdicts and vice versa. The keys must describe the content of
	// everything the results depend on (file hashes, limits, settings).
	CacheDir               string
	VerdictKey, FeatureKey any
	// Limit restricts the table to the first Limit images of Source (0 =
	// all). The cache holds rows of the whole source, so a limited sweep
	// reuses and extends the cache of the unlimited one and vice versa.
	Limit int
	// Workers is the number of concurrent workers; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is called with the number of finished images
	// (cached ones included) after each image.
	Progress func(done, total int)

	// Detection sweeps: when NewDetector is set, Cases yields the source
	// cases with their ground truth (same order as Source), each worker
	// runs its own detector, and the table holds every image's per-image
	// AP on the source and on every follow-up (against the transformed
	// ground truth) instead of predictions; Oracle turns them into
	// verdicts. NewClassifier is not used then.
	Cases       CaseSource
	NewDetector func() (Detector, error)
	Oracle      sut.DetectionOracle
}

// Table is a finished sweep: the classifier's prediction for every image
// and every follow-up, and every image's context features.
type Table struct {
	Images       int
	Variants     []scenario.Variant
	Labels       []int     // per image, -1 when unknown
	PredOriginal []int     // per image
	Pred         []int     // images × variants, row-major
	Dim          int       // feature dimension (0 without features)
	Features     []float32 // images × Dim, row-major

	// Detection tables (Detection true) hold per-image APs instead of
	// predictions (Labels and Pred* are then unused): −1 for images
	// without annotations.
	Detection   bool
	IDs         []int64   // per image, the data set's image id
	MapOriginal []float64 // per image
	Map         []float64 // images × variants, row-major
	Violated    []bool    // images × variants: the oracle's verdicts
}

// Verdicts returns the table rows of the given follow-ups (a scenario's
// variants, looked up by key) for every image, image-major, in the order
// of vars; it is an error if the table lacks one of them.
func (t *Table) Verdicts(vars []scenario.Variant) ([]record.Verdict, error) {
	col := map[string]int{}
	for j, v := range t.Variants {
		col[v.Key()] = j
	}
	cols := make([]int, len(vars))
	for k, v := range vars {
		j, ok := col[v.Key()]
		if !ok {
			return nil, fmt.Errorf("sweep: the table has no follow-up %s", v.Key())
		}
		cols[k] = j
	}
	out := make([]record.Verdict, 0, t.Images*len(vars))
	for i := 0; i < t.Images; i++ {
		for k, v := range vars {
			if t.Detection {
				j := i*len(t.Variants) + cols[k]
				out = append(out, record.Verdict{
					Image: i, MR: v.Action, Param: v.Value, Violation: t.Violated[j],
					PredOriginal: -1, PredTransformed: -1, Label: -1,
					MapOriginal: t.MapOriginal[i], MapTransformed: t.Map[j],
				})
				continue
			}
			p := t.Pred[i*len(t.Variants)+cols[k]]
			out = append(out, record.Verdict{
				Image: i, MR: v.Action, Param: v.Value, Violation: p != t.PredOriginal[i],
				PredOriginal: t.PredOriginal[i], PredTransformed: p, Label: t.Labels[i],
				MapOriginal: math.NaN(), MapTransformed: math.NaN(),
			})
		}
	}
	return out, nil
}

// ExportVerdicts returns the rows of Verdicts as a verdict CSV shows them:
// for a detection table the Image column holds the data set's image id
// (the image_id column), not the image's position.
func (t *Table) ExportVerdicts(vars []scenario.Variant) ([]record.Verdict, error) {
	rows, err := t.Verdicts(vars)
	if err != nil || !t.Detection {
		return rows, err
	}
	for k := range rows {
		rows[k].Image = int(t.IDs[rows[k].Image])
	}
	return rows, nil
}

// WriteCSV writes the rows of the given follow-ups to path (atomically)
// with the classification or detection columns of record.
func (t *Table) WriteCSV(path string, vars []scenario.Variant) error {
	rows, err := t.ExportVerdicts(vars)
	if err != nil {
		return err
	}
	return record.WriteVerdictsCSV(path, rows, t.Detection)
}

// cache record lines.
type verdictLine struct {
	Image int   `json:"image"`
	Label int   `json:"label"`
	Pred  int   `json:"pred"`
	Preds []int `json:"preds"`
}

// detectionLine is one image of a detection table: the per-image APs of
// the source and of every follow-up.
type detectionLine struct {
	Image int       `json:"image"`
	ID    int64     `json:"id"`
	Map   float64   `json:"map"`
	Maps  []float64 `json:"maps"`
}

type featureLine struct {
	Image    int       `json:"image"`
	Features []float32 `json:"features"`
}

type cacheMeta struct {
	Kind     string          `json:"kind"`
	Key      json.RawMessage `json:"key"`
	Images   int             `json:"images"`
	Variants []string        `json:"variants,omitempty"`
	Dim      int             `json:"dim,omitempty"`
}

// CacheDirs returns the verdict and feature cache directories of cfg.
func (cfg *SweepConfig) CacheDirs() (verdicts, features string, err error) {
	h := func(kind string, key any) (string, error) {
		b, err := json.Marshal(key)
		if err != nil {
			return "", fmt.Errorf("sweep: cache key: %w", err)
		}
		s := sha256.Sum256(b)
		return filepath.Join(cfg.CacheDir, kind+"-"+hex.EncodeToString(s[:])[:20]), nil
	}
	if verdicts, err = h("verdicts", cfg.VerdictKey); err != nil {
		return
	}
	if cfg.NewExtractor != nil {
		features, err = h("features", cfg.FeatureKey)
	}
	return
}

// Sweep computes the exhaustive table, reusing what the cache already
// holds. Finished images are appended to per-process part files as they
// complete (one JSON line each), so an interrupted sweep (ctx cancelled,
// Ctrl-C, kill) loses at most the images in flight; rerunning computes
// only the missing images and ends with the same table. When the table is
// complete it is consolidated into table.jsonl. Two sweeps must not share
// a cache directory at the same time.
func Sweep(ctx context.Context, cfg SweepConfig) (*Table, error) {
	total := cfg.Source.Len() // images of the cached table
	if total == 0 {
		return nil, errors.New("sweep: the data set is empty")
	}
	n := total // images of this sweep
	if cfg.Limit > 0 && cfg.Limit < total {
		n = cfg.Limit
	}
	if len(cfg.Variants) == 0 {
		return nil, errors.New("sweep: no follow-ups")
	}
	keys := make([]string, len(cfg.Variants))
	for j, v := range cfg.Variants {
		keys[j] = v.Key()
		if cfg.Relations[keys[j]] == nil {
			return nil, fmt.Errorf("sweep: no relation for follow-up %s", keys[j])
		}
	}
	vdir, fdir, err := cfg.CacheDirs()
	if err != nil {
		return nil, err
	}
	t := &Table{Images: n, Variants: cfg.Variants, Labels: make([]int, n), PredOriginal: make([]int, n), Pred: make([]int, n*len(keys))}
	kind := "verdicts"
	if cfg.NewDetector != nil {
		if cfg.Cases == nil || cfg.Cases.Len() != total {
			return nil, errors.New("sweep: a detection sweep needs the source's cases with their ground truth")
		}
		if err := cfg.Oracle.Validate(); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		kind = "detection-verdicts"
		t.Detection = true
		t.Labels, t.PredOriginal, t.Pred = nil, nil, nil
		t.IDs, t.MapOriginal = make([]int64, n), make([]float64, n)
		t.Map, t.Violated = make([]float64, n*len(keys)), make([]bool, n*len(keys))
	}
	var ext0 Extractor
	if cfg.NewExtractor != nil {
		if ext0, err = cfg.NewExtractor(); err != nil {
			return nil, fmt.Errorf("sweep: %w", err)
		}
		t.Dim = ext0.Dim()
		t.Features = make([]float32, n*t.Dim)
	}
	vkey, _ := json.Marshal(cfg.VerdictKey)
	if err := checkMeta(vdir, cacheMeta{Kind: kind, Key: vkey, Images: total, Variants: keys}); err != nil {
		return nil, err
	}
	haveV := make([]bool, n)
	if err := loadCache(vdir, func(line []byte) error {
		if t.Detection {
			var l detectionLine
			if err := strictJSON(line, &l); err != nil {
				return err
			}
			if l.Image < 0 || l.Image >= total || len(l.Maps) != len(keys) {
				return fmt.Errorf("image %d with %d APs does not fit a table of %d images × %d follow-ups", l.Image, len(l.Maps), total, len(keys))
			}
			if l.Image < n && !haveV[l.Image] {
				haveV[l.Image] = true
				t.setDetection(l, cfg.Oracle)
			}
			return nil
		}
		var l verdictLine
		if err := strictJSON(line, &l); err != nil {
			return err
		}
		if l.Image < 0 || l.Image >= total || len(l.Preds) != len(keys) {
			return fmt.Errorf("image %d with %d predictions does not fit a table of %d images × %d follow-ups", l.Image, len(l.Preds), total, len(keys))
		}
		if l.Image < n && !haveV[l.Image] {
			haveV[l.Image] = true
			t.Labels[l.Image], t.PredOriginal[l.Image] = l.Label, l.Pred
			copy(t.Pred[l.Image*len(keys):], l.Preds)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	haveF := make([]bool, n)
	if fdir != "" {
		fkey, _ := json.Marshal(cfg.FeatureKey)
		if err := checkMeta(fdir, cacheMeta{Kind: "features", Key: fkey, Images: total, Dim: t.Dim}); err != nil {
			return nil, err
		}
		if err := loadCache(fdir, func(line []byte) error {
			var l featureLine
			if err := strictJSON(line, &l); err != nil {
				return err
			}
			if l.Image < 0 || l.Image >= total || len(l.Features) != t.Dim {
				return fmt.Errorf("image %d with %d features does not fit %d images × %d", l.Image, len(l.Features), total, t.Dim)
			}
			if l.Image < n && !haveF[l.Image] {
				haveF[l.Image] = true
				copy(t.Features[l.Image*t.Dim:], l.Features)
			}
			return nil
		}); err != nil {
			return nil, err
		}
	} else {
		for i := range haveF {
			haveF[i] = true
		}
	}
	var todo []int
	for i := 0; i < n; i++ {
		if !haveV[i] || !haveF[i] {
			todo = append(todo, i)
		}
	}
	done := n - len(todo)
	if cfg.Progress != nil {
		cfg.Progress(done, n)
	}
	if len(todo) > 0 {
		if err := sweepImages(ctx, cfg, t, todo, haveV, haveF, vdir, fdir, ext0, done); err != nil {
			return nil, err
		}
	}
	if n < total {
		return t, nil // only a whole table is consolidated
	}
	if err := consolidate(vdir, func(w *bytes.Buffer) error {
		for i := 0; i < n; i++ {
			if t.Detection {
				if err := writeLine(w, t.detectionLine(i)); err != nil {
					return err
				}
				continue
			}
			if err := writeLine(w, verdictLine{Image: i, Label: t.Labels[i], Pred: t.PredOriginal[i], Preds: t.Pred[i*len(keys) : (i+1)*len(keys)]}); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if fdir != "" {
		if err := consolidate(fdir, func(w *bytes.Buffer) error {
			for i := 0; i < n; i++ {
				if err := writeLine(w, featureLine{Image: i, Features: t.Features[i*t.Dim : (i+1)*t.Dim]}); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// setDetection stores a detection line in t.
func (t *Table) setDetection(l detectionLine, o sut.DetectionOracle) {
	nv := len(t.Variants)
	t.IDs[l.Image], t.MapOriginal[l.Image] = l.ID, l.Map
	copy(t.Map[l.Image*nv:], l.Maps)
	for j, m := range l.Maps {
		t.Violated[l.Image*nv+j] = o.Violated(l.Map, m)
	}
}

func (t *Table) detectionLine(i int) detectionLine {
	nv := len(t.Variants)
	return detectionLine{Image: i, ID: t.IDs[i], Map: t.MapOriginal[i], Maps: t.Map[i*nv : (i+1)*nv]}
}

// detectImage computes the detection line of case i: the source's
// detections once, then every follow-up through Detection.outcome. It
// stops with ctx.Err() between follow-ups when ctx is cancelled (an image
// takes 60 detector runs, seconds on a CPU).
func detectImage(ctx context.Context, cfg *SweepConfig, det Detection, i int, variants []scenario.Variant) (detectionLine, rgb.Image, error) {
	c, err := cfg.Cases.Case(i)
	if err != nil {
		return detectionLine{}, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
	}
	gt := groundTruth(c.Annotations)
	src, err := det.Detector.Detect(c.Image)
	if err != nil {
		return detectionLine{}, rgb.Image{}, fmt.Errorf("sweep: image %d: %w", i, err)
	}
	l := detectionLine{Image: i, ID: c.ID, Map: -1, Maps: make([]float64, len(variants))}
	for j, v := range variants {
		if err := ctx.Err(); err != nil {
			return detectionLine{}, rgb.Image{}, err
		}
		o, err := det.outcome(c.Image, gt, src, cfg.Relations[v.Key()])
		if err != nil {
			return detectionLine{}, rgb.Image{}, fmt.Errorf("sweep: image %d, %s: %w", i, v.Key(), err)
		}
		l.Map, l.Maps[j] = o.OriginalScore, o.ModifiedScore
	}
	return l, c.Image, nil
}

func sweepImages(ctx context.Context, cfg SweepConfig, t *Table, todo []int, haveV, haveF []bool, vdir, fdir string, ext0 Extractor, done int) error {
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if workers > len(todo) {
		workers = len(todo)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan int)
	finished := make(chan int)
	errc := make(chan error, workers)
	stamp := time.Now().UnixNano()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			if err := sweepWorker(ctx, cfg, t, jobs, finished, haveV, haveF, vdir, fdir, ext0, w, stamp); err != nil {
				errc <- err
				cancel()
			}
		}(w)
	}
	go func() {
		defer close(jobs)
		for _, i := range todo {
			select {
			case jobs <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(finished) }()
	for range finished {
		done++
		if cfg.Progress != nil {
			cfg.Progress(done, t.Images)
		}
	}
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	if done < t.Images {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("sweep interrupted after %d of %d images (finished images are cached; rerun to resume): %w", done, t.Images, context.Cause(ctx))
		}
		return fmt.Errorf("sweep: only %d of %d images finished", done, t.Images)
	}
	return nil
}

// sweepWorker processes images from jobs, appending each finished image to
// its own part files. Each worker writes disjoint images of t.
func sweepWorker(ctx context.Context, cfg SweepConfig, t *Table, jobs <-chan int, finished chan<- int, haveV, haveF []bool, vdir, fdir string, ext0 Extractor, w int, stamp int64) error {
	var cls Classifier
	var det Detector
	ext := ext0
	if w > 0 && cfg.NewExtractor != nil {
		ext = nil
	}
	var vpart, fpart *os.File
	defer func() {
		if vpart != nil {
			vpart.Close()
		}
		if fpart != nil {
			fpart.Close()
		}
	}()
	open := func(dir string) (*os.File, error) {
		return os.OpenFile(filepath.Join(dir, fmt.Sprintf("part-%d-%d.jsonl", stamp, w)), os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
	}
	nv := len(t.Variants)
	batch := make([]rgb.Image, 1+nv)
	for i := range jobs {
		if ctx.Err() != nil {
			return nil
		}
		var img rgb.Image
		label := -1
		if t.Detection && !haveV[i] {
			if det == nil {
				var err error
				if det, err = cfg.NewDetector(); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			l, src, err := detectImage(ctx, &cfg, Detection{Detector: det, Oracle: cfg.Oracle}, i, t.Variants)
			if ctx.Err() != nil {
				return nil // interrupted: the image in flight is dropped
			}
			if err != nil {
				return err
			}
			img = src
			if vpart == nil {
				if vpart, err = open(vdir); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			if err := appendLine(vpart, l); err != nil {
				return err
			}
			t.setDetection(l, cfg.Oracle)
		}
		var err error
		if img.Pix == nil {
			if img, label, err = cfg.Source.Image(i); err != nil {
				return fmt.Errorf("sweep: image %d: %w", i, err)
			}
		}
		if !t.Detection && !haveV[i] {
			if cls == nil {
				if cls, err = cfg.NewClassifier(); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			batch[0] = img
			for j, v := range t.Variants {
				batch[1+j] = cfg.Relations[v.Key()].Apply(img)
			}
			pred, err := cls.Classify(batch)
			if err != nil {
				return fmt.Errorf("sweep: image %d: %w", i, err)
			}
			if len(pred) != len(batch) {
				return fmt.Errorf("sweep: image %d: classifier returned %d predictions for %d images", i, len(pred), len(batch))
			}
			l := verdictLine{Image: i, Label: label, Pred: pred[0], Preds: pred[1:]}
			if vpart == nil {
				if vpart, err = open(vdir); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			if err := appendLine(vpart, l); err != nil {
				return err
			}
			t.Labels[i], t.PredOriginal[i] = label, pred[0]
			copy(t.Pred[i*nv:], pred[1:])
		}
		if !haveF[i] {
			if ext == nil {
				if ext, err = cfg.NewExtractor(); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			f, err := featuresOf(ext, img, i, t.Dim)
			if err != nil {
				return fmt.Errorf("sweep: %w", err)
			}
			for k, x := range f {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("sweep: features of image %d: value %d is %v", i, k, x)
				}
			}
			if fpart == nil {
				if fpart, err = open(fdir); err != nil {
					return fmt.Errorf("sweep: %w", err)
				}
			}
			if err := appendLine(fpart, featureLine{Image: i, Features: f}); err != nil {
				return err
			}
			copy(t.Features[i*t.Dim:], f)
		}
		finished <- i
	}
	return nil
}

func writeLine(w *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(b)
	w.WriteByte('\n')
	return nil
}

// appendLine writes v as one JSON line with a single write call, so a
// killed process leaves at most a torn last line.
func appendLine(f *os.File, v any) error {
	var buf bytes.Buffer
	if err := writeLine(&buf, v); err != nil {
		return err
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

func strictJSON(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// checkMeta creates dir and its meta.json, or checks that an existing
// meta.json describes the same table.
func checkMeta(dir string, m cacheMeta) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	want, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	want = append(want, '\n')
	p := filepath.Join(dir, "meta.json")
	got, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return record.WriteFileAtomic(p, want)
	}
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("sweep: cache %s was made for other settings (its meta.json differs); remove the directory", dir)
	}
	return nil
}

// loadCache feeds every complete line of dir's table.jsonl, or of its part
// files, to fn. A part file's last line may be torn by a kill: a final
// line without a newline is ignored.
func loadCache(dir string, fn func([]byte) error) error {
	files, err := filepath.Glob(filepath.Join(dir, "part-*.jsonl"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if _, err := os.Stat(filepath.Join(dir, "table.jsonl")); err == nil {
		files = append([]string{filepath.Join(dir, "table.jsonl")}, files...)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), 1<<28)
		complete := len(b) > 0 && b[len(b)-1] == '\n'
		lines := bytes.Count(b, []byte{'\n'})
		for ln := 1; sc.Scan(); ln++ {
			if ln > lines && !complete {
				break // torn last line of an interrupted write
			}
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			if err := fn(sc.Bytes()); err != nil {
				return fmt.Errorf("sweep: cache file %s:%d: %w", f, ln, err)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("sweep: %s: %w", f, err)
		}
	}
	return nil
}

// consolidate writes dir/table.jsonl (complete, sorted) if part files exist
// or it is missing, then removes the part files.
func consolidate(dir string, write func(*bytes.Buffer) error) error {
	parts, err := filepath.Glob(filepath.Join(dir, "part-*.jsonl"))
	if err != nil {
		return err
	}
	tp := filepath.Join(dir, "table.jsonl")
	if _, err := os.Stat(tp); err == nil && len(parts) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	if err := record.WriteFileAtomic(tp, buf.Bytes()); err != nil {
		return err
	}
	for _, p := range parts {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	return nil
}
