package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// Config is a parsed, checked experiment configuration (a YAML file in
// experiments/). Every path in it is resolved; LoadConfig has checked that
// the files exist, that the names are known and that the values are in
// range. Checks that need the model (its input size) happen in Prepare.
type Config struct {
	// File is the configuration file's path, used in error messages.
	File string
	// Name names the experiment; results go to Output (default
	// results/<Name>).
	Name        string
	Description string
	// CaseStudy is "classification" (verdict: the top-1 class changes) or
	// "detection" (verdict: the per-image COCO AP drops by more than
	// SUT.Detection.Threshold; the data set must be COCO).
	CaseStudy string
	// Mode is "online" (run the SUT in the loop, as the paper) or "replay"
	// (look verdicts up in the cached exhaustive sweep).
	Mode     string
	Data     DataConfig
	SUT      SUTConfig
	Features FeaturesConfig
	// Scenario is the action set the agents choose from (its actions are
	// package mr's relations).
	Scenario scenario.Scenario
	Agents   []AgentSpec
	Seeds    []uint64
	Passes   int
	// Iterations caps each run (0 = Passes × images).
	Iterations  int
	LogInterval int
	// Timing puts measured times into summary.json (default: true online,
	// false in replay); timing.json always has them.
	Timing bool
	// Output is the results folder; Cache the sweep cache folder
	// (default .cache/amt). Both are relative to the working directory.
	Output, Cache string
	// Workers is the number of sweep workers (0 = GOMAXPROCS).
	Workers int
	// State, when set, is a folder of agent state files
	// (State/<agent id>/seed-<n>.state): each run continues from its file
	// when it exists and saves it afterwards (the paper's "load existing
	// or initialise new bandit", for continuous integration).
	State string

	pos map[string]pos
}

// DataConfig is the data set of an experiment.
type DataConfig struct {
	Format string // cifar10, coco or folder
	Path   string // resolved
	Images string // COCO image folder (resolved), optional
	Limit  int    // first Limit cases only (0 = all)
}

// SUTConfig is the system under test.
type SUTConfig struct {
	Model string // resolved path of the ONNX model
	// InputWidth and InputHeight are the model's input size.
	InputWidth, InputHeight int
	Mean, Std               [3]float64
	// BatchSize caps the images per model run (0 = whole batches).
	BatchSize int
	// Detection holds the detector's post-processing and the verdict
	// threshold (case_study detection only).
	Detection DetectionConfig
}

// DetectionConfig is the detection SUT's configuration: the single-stage
// detector's post-processing (defaults: the reference yolov3-tiny pipeline
// of shared/golden/detection/README.md) and the verdict rule's tolerated
// AP drop (default sut.DefaultDetectionThreshold, the paper's 0.05).
type DetectionConfig struct {
	// ScoreThreshold is the minimum detection score (default 0.005).
	ScoreThreshold float64
	// NMSIoU is the per-class NMS IoU above which a box is suppressed
	// (default 0.45).
	NMSIoU float64
	// MaxDetections is the number of detections kept per image (default
	// 100, COCO's maxDets).
	MaxDetections int
	// Threshold is the verdict's tolerated AP drop (default 0.05).
	Threshold float64
}

// FeaturesConfig is the context feature extractor.
type FeaturesConfig struct {
	Kind  string // model, phash or none
	Model string // resolved path (kind model)
}

// AgentSpec is one agent of an experiment: a bandit agent name, options,
// and the id naming its result folder (default: the name).
type AgentSpec struct {
	ID, Name string
	Options  bandit.Options
}

type pos struct{ line, col int }

// errAt returns an error naming the file, the line of key and key; %w
// wraps.
func (c *Config) errAt(key string, format string, args ...any) error {
	p := c.pos[key]
	return fmt.Errorf("%s:%d:%d: %s: %w", c.File, p.line, p.col, key, fmt.Errorf(format, args...))
}

var imagenetMean, imagenetStd = [3]float64{0.485, 0.456, 0.406}, [3]float64{0.229, 0.224, 0.225}

// LoadConfig reads and checks an experiment configuration. Unknown keys,
// missing keys, values of the wrong type or out of range, unknown agents,
// options or relations and missing files are errors naming the file, the
// line and the key. Relative paths are looked up beside the config file
// first, then in the assets folder (assetsDir; "" means the default, see
// data.AssetsDir).
func LoadConfig(path, assetsDir string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return ParseConfig(b, path, assetsDir)
}

// ParseConfig parses a configuration document; name is its file name (for
// errors and for resolving relative paths).
func ParseConfig(doc []byte, name, assetsDir string) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(root.Content) == 0 {
		return nil, fmt.Errorf("%s: empty configuration", name)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("%s:%d: a second YAML document; a configuration is one document", name, extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	p := &parser{file: name, dir: filepath.Dir(name), assets: assetsDir, cfg: &Config{File: name, pos: map[string]pos{}}, keys: map[string]pos{}}
	if err := p.parse(root.Content[0]); err != nil {
		return nil, err
	}
	return p.cfg, nil
}

type parser struct {
	file, dir, assets string
	cfg               *Config
	keys              map[string]pos // positions of keys by dotted path
}

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s: %s", p.file, n.Line, n.Column, key, fmt.Sprintf(format, args...))
}

// fields checks a mapping's keys against known and returns the value nodes
// by key; required keys must be present.
func (p *parser) fields(n *yaml.Node, path string, known, required []string) (map[string]*yaml.Node, error) {
	where := path
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, where, "want a mapping of keys, got %s", kindName(n))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		full := join(path, k.Value)
		if !slices.Contains(known, k.Value) {
			msg := fmt.Sprintf("unknown key (known keys: %s)", strings.Join(known, ", "))
			if s := suggest(k.Value, known); s != "" {
				msg = fmt.Sprintf("unknown key; did you mean %q? (known keys: %s)", s, strings.Join(known, ", "))
			}
			return nil, p.errf(k, full, "%s", msg)
		}
		if _, dup := out[k.Value]; dup {
			return nil, p.errf(k, full, "key given twice")
		}
		out[k.Value] = v
		p.cfg.pos[full] = pos{v.Line, v.Column}
		p.keys[full] = pos{k.Line, k.Column}
	}
	for _, r := range required {
		if _, ok := out[r]; !ok {
			if kp, ok := p.keys[path]; ok { // point at the parent key
				return nil, fmt.Errorf("%s:%d:%d: %s: missing required key", p.file, kp.line, kp.col, join(path, r))
			}
			return nil, p.errf(n, join(path, r), "missing required key")
		}
	}
	return out, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// suggest returns the known key closest to k (edit distance ≤ 2).
func suggest(k string, known []string) string {
	best, bd := "", 3
	for _, c := range known {
		if d := editDistance(k, c); d < bd {
			best, bd = c, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev = cur
	}
	return prev[len(b)]
}

func (p *parser) scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, key, "want a single value, got %s", kindName(n))
	}
	return n.Value, nil
}

func (p *parser) str(m map[string]*yaml.Node, path, key string, allowed []string, def string) (string, error) {
	n, ok := m[key]
	if !ok {
		return def, nil
	}
	s, err := p.scalar(n, join(path, key))
	if err != nil {
		return "", err
	}
	if allowed != nil && !slices.Contains(allowed, s) {
		return "", p.errf(n, join(path, key), "%q is not one of %s", s, strings.Join(allowed, ", "))
	}
	if s == "" {
		return "", p.errf(n, join(path, key), "empty value")
	}
	return s, nil
}

func (p *parser) integer(m map[string]*yaml.Node, path, key string, lo, hi, def int) (int, error) {
	n, ok := m[key]
	if !ok {
		return def, nil
	}
	s, err := p.scalar(n, join(path, key))
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, p.errf(n, join(path, key), "%q is not an integer in [%d, %d]", s, lo, hi)
	}
	return v, nil
}

func (p *parser) boolean(m map[string]*yaml.Node, path, key string, def bool) (bool, error) {
	n, ok := m[key]
	if !ok {
		return def, nil
	}
	s, err := p.scalar(n, join(path, key))
	if err != nil {
		return false, err
	}
	switch s {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, p.errf(n, join(path, key), "%q is not true or false", s)
}

func (p *parser) triple(m map[string]*yaml.Node, path, key string, def [3]float64, positive bool) ([3]float64, error) {
	n, ok := m[key]
	if !ok {
		return def, nil
	}
	full := join(path, key)
	if n.Kind != yaml.SequenceNode || len(n.Content) != 3 {
		return def, p.errf(n, full, "want a list of 3 numbers (R, G, B), got %s", kindName(n))
	}
	var out [3]float64
	for i, c := range n.Content {
		v, err := strconv.ParseFloat(c.Value, 64)
		if c.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
			want := "a finite number"
			if positive {
				want = "a positive number"
			}
			return def, p.errf(c, full, "%q is not %s", c.Value, want)
		}
		out[i] = v
	}
	return out, nil
}

// file resolves a path beside the config file, then in the assets folder.
func (p *parser) path(m map[string]*yaml.Node, path, key string, dir bool) (string, error) {
	n := m[key]
	full := join(path, key)
	s, err := p.scalar(n, full)
	if err != nil {
		return "", err
	}
	if s == "" {
		return "", p.errf(n, full, "empty path")
	}
	var tried []string
	check := func(c string) bool {
		tried = append(tried, c)
		st, err := os.Stat(c)
		return err == nil && st.IsDir() == dir
	}
	if filepath.IsAbs(s) {
		if check(s) {
			return s, nil
		}
	} else {
		if c := filepath.Join(p.dir, s); check(c) {
			return c, nil
		}
		assets := p.assets
		if assets == "" {
			assets, _ = data.AssetsDir()
		}
		if assets != "" {
			if c := filepath.Join(assets, s); check(c) {
				return c, nil
			}
		}
	}
	what := "file"
	if dir {
		what = "folder"
	}
	return "", p.errf(n, full, "%s %q not found (looked at %s)", what, s, strings.Join(tried, ", "))
}

var topKeys = []string{"name", "description", "case_study", "mode", "data", "sut", "features", "action_set", "agents",
	"seeds", "passes", "iterations", "log_interval", "timing", "output", "cache", "workers", "state"}

func (p *parser) parse(n *yaml.Node) error {
	c := p.cfg
	m, err := p.fields(n, "", topKeys, []string{"name", "case_study", "mode", "data", "sut", "features", "action_set", "agents", "seeds"})
	if err != nil {
		return err
	}
	if c.Name, err = p.str(m, "", "name", nil, ""); err != nil {
		return err
	}
	if strings.ContainsAny(c.Name, `/\ `) {
		return p.errf(m["name"], "name", "%q must not contain slashes or spaces (it names the results folder)", c.Name)
	}
	if dn, ok := m["description"]; ok {
		if c.Description, err = p.scalar(dn, "description"); err != nil {
			return err
		}
	}
	if c.CaseStudy, err = p.str(m, "", "case_study", []string{"classification", "detection"}, ""); err != nil {
		return err
	}
	if c.Mode, err = p.str(m, "", "mode", []string{"online", "replay"}, ""); err != nil {
		return err
	}
	if err := p.parseData(m["data"]); err != nil {
		return err
	}
	if err := p.parseSUT(m["sut"]); err != nil {
		return err
	}
	if err := p.parseFeatures(m["features"]); err != nil {
		return err
	}
	if err := p.parseActionSet(m["action_set"]); err != nil {
		return err
	}
	if err := p.parseAgents(m["agents"]); err != nil {
		return err
	}
	if err := p.parseSeeds(m["seeds"]); err != nil {
		return err
	}
	if c.Passes, err = p.integer(m, "", "passes", 1, 1000, 1); err != nil {
		return err
	}
	if c.Iterations, err = p.integer(m, "", "iterations", 0, math.MaxInt32, 0); err != nil {
		return err
	}
	if c.LogInterval, err = p.integer(m, "", "log_interval", 1, math.MaxInt32, 100); err != nil {
		return err
	}
	if c.Timing, err = p.boolean(m, "", "timing", c.Mode == "online"); err != nil {
		return err
	}
	if c.Workers, err = p.integer(m, "", "workers", 0, 1024, 0); err != nil {
		return err
	}
	if c.Output, err = p.str(m, "", "output", nil, filepath.Join("results", c.Name)); err != nil {
		return err
	}
	if c.Cache, err = p.str(m, "", "cache", nil, filepath.Join(".cache", "amt")); err != nil {
		return err
	}
	if c.State, err = p.str(m, "", "state", nil, ""); err != nil {
		return err
	}
	if c.Data.Limit > 0 && c.Iterations > c.Passes*c.Data.Limit {
		return p.errf(m["iterations"], "iterations", "%d is more than passes × data.limit = %d", c.Iterations, c.Passes*c.Data.Limit)
	}
	return nil
}

func (p *parser) parseData(n *yaml.Node) error {
	d := &p.cfg.Data
	m, err := p.fields(n, "data", []string{"format", "path", "images", "limit"}, []string{"format", "path"})
	if err != nil {
		return err
	}
	if d.Format, err = p.str(m, "data", "format", []string{"cifar10", "coco", "folder"}, ""); err != nil {
		return err
	}
	if p.cfg.CaseStudy == "detection" && d.Format != "coco" {
		return p.errf(m["format"], "data.format", "%q: a detection experiment needs ground-truth boxes, i.e. format coco", d.Format)
	}
	if d.Path, err = p.path(m, "data", "path", d.Format == "folder"); err != nil {
		return err
	}
	if _, ok := m["images"]; ok {
		if d.Format != "coco" {
			return p.errf(m["images"], "data.images", "only COCO data sets have an image folder")
		}
		if d.Images, err = p.path(m, "data", "images", true); err != nil {
			return err
		}
	}
	d.Limit, err = p.integer(m, "data", "limit", 0, math.MaxInt32, 0)
	return err
}

var (
	classificationSUTKeys = []string{"model", "input_size", "mean", "std", "batch_size"}
	detectionSUTKeys      = []string{"model", "input_size", "score_threshold", "nms_iou", "max_detections", "threshold"}
)

func (p *parser) parseSUT(n *yaml.Node) error {
	if p.cfg.CaseStudy == "detection" {
		return p.parseDetectionSUT(n)
	}
	s := &p.cfg.SUT
	m, err := p.fields(n, "sut", classificationSUTKeys, []string{"model", "input_size"})
	if err != nil {
		return err
	}
	if s.Model, err = p.path(m, "sut", "model", false); err != nil {
		return err
	}
	if s.InputWidth, s.InputHeight, err = p.size(m["input_size"], "sut.input_size"); err != nil {
		return err
	}
	if s.Mean, err = p.triple(m, "sut", "mean", imagenetMean, false); err != nil {
		return err
	}
	if s.Std, err = p.triple(m, "sut", "std", imagenetStd, true); err != nil {
		return err
	}
	s.BatchSize, err = p.integer(m, "sut", "batch_size", 0, 1<<16, 0)
	return err
}

// parseDetectionSUT reads a detection SUT:
//
//	sut:
//	  model: models/coco_yolov3-tiny.onnx
//	  input_size: 416        # square letterbox side (default 416)
//	  score_threshold: 0.005 # keep detections scoring at least this
//	  nms_iou: 0.45          # per-class NMS suppresses IoU above this
//	  max_detections: 100    # top-K per image
//	  threshold: 0.05        # violation iff AP(follow-up) < AP(source) − threshold
func (p *parser) parseDetectionSUT(n *yaml.Node) error {
	s := &p.cfg.SUT
	m, err := p.fields(n, "sut", detectionSUTKeys, []string{"model"})
	if err != nil {
		for _, k := range classificationSUTKeys {
			if !slices.Contains(detectionSUTKeys, k) && n.Kind == yaml.MappingNode && hasKey(n, k) {
				return fmt.Errorf("%w (sut.%s applies to classification only; a detector letterboxes to [0, 1] without mean/std)", err, k)
			}
		}
		return err
	}
	if s.Model, err = p.path(m, "sut", "model", false); err != nil {
		return err
	}
	s.InputWidth, s.InputHeight = 416, 416
	if sn, ok := m["input_size"]; ok {
		if s.InputWidth, s.InputHeight, err = p.size(sn, "sut.input_size"); err != nil {
			return err
		}
		if s.InputWidth != s.InputHeight {
			return p.errf(sn, "sut.input_size", "a detector takes a square letterboxed input; got %d×%d", s.InputWidth, s.InputHeight)
		}
	}
	d := &s.Detection
	if d.ScoreThreshold, err = p.float(m, "sut", "score_threshold", 0, 1, 0.005); err != nil {
		return err
	}
	if d.NMSIoU, err = p.float(m, "sut", "nms_iou", 0, 1, 0.45); err != nil {
		return err
	}
	if d.MaxDetections, err = p.integer(m, "sut", "max_detections", 1, 1<<20, 100); err != nil {
		return err
	}
	d.Threshold, err = p.float(m, "sut", "threshold", 0, 1, 0.05)
	return err
}

func hasKey(n *yaml.Node, k string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == k {
			return true
		}
	}
	return false
}

// float reads a finite number in [lo, hi].
func (p *parser) float(m map[string]*yaml.Node, path, key string, lo, hi, def float64) (float64, error) {
	n, ok := m[key]
	if !ok {
		return def, nil
	}
	s, err := p.scalar(n, join(path, key))
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || v < lo || v > hi {
		return 0, p.errf(n, join(path, key), "%q is not a number in [%g, %g]", s, lo, hi)
	}
	return v, nil
}

// size reads an input size: one integer (square) or [width, height].
func (p *parser) size(n *yaml.Node, key string) (int, int, error) {
	bad := p.errf(n, key, "want a positive integer or [width, height], got %s", kindName(n))
	switch n.Kind {
	case yaml.ScalarNode:
		v, err := strconv.Atoi(n.Value)
		if err != nil || v <= 0 || v > 1<<14 {
			return 0, 0, bad
		}
		return v, v, nil
	case yaml.SequenceNode:
		if len(n.Content) != 2 {
			return 0, 0, bad
		}
		w, err1 := strconv.Atoi(n.Content[0].Value)
		h, err2 := strconv.Atoi(n.Content[1].Value)
		if err1 != nil || err2 != nil || w <= 0 || h <= 0 || w > 1<<14 || h > 1<<14 {
			return 0, 0, bad
		}
		return w, h, nil
	}
	return 0, 0, bad
}

func (p *parser) parseFeatures(n *yaml.Node) error {
	f := &p.cfg.Features
	m, err := p.fields(n, "features", []string{"kind", "model"}, []string{"kind"})
	if err != nil {
		return err
	}
	if f.Kind, err = p.str(m, "features", "kind", []string{"model", "phash", "none"}, ""); err != nil {
		return err
	}
	_, has := m["model"]
	switch {
	case f.Kind == "model" && !has:
		return p.errf(n, "features.model", "missing required key (features.kind is model)")
	case f.Kind != "model" && has:
		return p.errf(m["model"], "features.model", "only features.kind model takes a model")
	case has:
		f.Model, err = p.path(m, "features", "model", false)
	}
	return err
}

// parseActionSet reads a built-in scenario's name or a user-defined one:
//
//	action_set:
//	  name: my-set
//	  reward: unit        # the objective: unit, or halving (the flat rotation/shear rule)
//	  arms:
//	    - mr: blur
//	    - mr: rotation
//	      params: -90:90:5   # a grid (hierarchical arm) or one value (flat arm)
func (p *parser) parseActionSet(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		s, err := mr.Builtin(n.Value)
		if err != nil {
			return p.errf(n, "action_set", "%v", err)
		}
		p.cfg.Scenario = s
		return nil
	}
	m, err := p.fields(n, "action_set", []string{"name", "arms", "reward"}, []string{"name", "arms"})
	if err != nil {
		return err
	}
	name, err := p.str(m, "action_set", "name", nil, "")
	if err != nil {
		return err
	}
	reward, err := p.str(m, "action_set", "reward", scenario.ObjectiveNames(), scenario.Paper.Name)
	if err != nil {
		return err
	}
	obj, err := scenario.ObjectiveByName(reward)
	if err != nil {
		return p.errf(m["reward"], "action_set.reward", "%v", err)
	}
	an := m["arms"]
	if an.Kind != yaml.SequenceNode || len(an.Content) == 0 {
		return p.errf(an, "action_set.arms", "want a non-empty list of arms")
	}
	var arms []scenario.Arm
	for i, a := range an.Content {
		path := fmt.Sprintf("action_set.arms[%d]", i)
		am, err := p.fields(a, path, []string{"name", "mr", "params"}, []string{"mr"})
		if err != nil {
			return err
		}
		arm := scenario.Arm{}
		if arm.Name, err = p.str(am, path, "name", nil, ""); err != nil {
			return err
		}
		if arm.Action, err = p.str(am, path, "mr", nil, ""); err != nil {
			return err
		}
		if pn, ok := am["params"]; ok {
			spec := pn.Value
			if pn.Kind == yaml.SequenceNode {
				var parts []string
				for _, e := range pn.Content {
					parts = append(parts, e.Value)
				}
				spec = strings.Join(parts, ",")
			}
			if arm.Values, err = scenario.ParseGrid(spec); err != nil {
				return p.errf(pn, path+".params", "%v", err)
			}
		}
		arms = append(arms, arm)
	}
	s, err := mr.NewScenario(name, obj, arms)
	if err != nil {
		return p.errf(an, "action_set", "%v", err)
	}
	p.cfg.Scenario = s
	return nil
}

func (p *parser) parseAgents(n *yaml.Node) error {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return p.errf(n, "agents", "want a non-empty list of agents, got %s", kindName(n))
	}
	ids := map[string]bool{}
	for i, a := range n.Content {
		path := fmt.Sprintf("agents[%d]", i)
		var spec AgentSpec
		if a.Kind == yaml.ScalarNode {
			spec.Name = a.Value
			p.cfg.pos[path+".name"] = pos{a.Line, a.Column}
		} else {
			m, err := p.fields(a, path, []string{"name", "id", "options"}, []string{"name"})
			if err != nil {
				return err
			}
			if spec.Name, err = p.str(m, path, "name", nil, ""); err != nil {
				return err
			}
			if spec.ID, err = p.str(m, path, "id", nil, ""); err != nil {
				return err
			}
			if on, ok := m["options"]; ok {
				if on.Kind != yaml.MappingNode {
					return p.errf(on, path+".options", "want a mapping of option: value, got %s", kindName(on))
				}
				spec.Options = bandit.Options{}
				for j := 0; j+1 < len(on.Content); j += 2 {
					k, v := on.Content[j], on.Content[j+1]
					if v.Kind != yaml.ScalarNode {
						return p.errf(v, path+".options."+k.Value, "want a single value, got %s", kindName(v))
					}
					spec.Options[k.Value] = v.Value
					p.cfg.pos[path+".options."+k.Value] = pos{k.Line, k.Column}
				}
			}
		}
		if !slices.Contains(bandit.Agents(), spec.Name) {
			msg := fmt.Sprintf("unknown agent %q (known: %s)", spec.Name, strings.Join(bandit.Agents(), ", "))
			if s := suggest(spec.Name, bandit.Agents()); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			return p.errf(a, path+".name", "%s", msg)
		}
		if _, err := bandit.Resolve(spec.Name, spec.Options); err != nil {
			return p.errf(a, path+".options", "%v", err)
		}
		if spec.ID == "" {
			spec.ID = spec.Name
		}
		if strings.ContainsAny(spec.ID, `/\ `) {
			return p.errf(a, path+".id", "%q must not contain slashes or spaces (it names a results folder)", spec.ID)
		}
		if ids[spec.ID] {
			return p.errf(a, path, "agent id %q used twice; give one of them an id", spec.ID)
		}
		ids[spec.ID] = true
		p.cfg.Agents = append(p.cfg.Agents, spec)
	}
	return nil
}

// parseSeeds reads a list of seeds, one seed, or a range "1-10".
func (p *parser) parseSeeds(n *yaml.Node) error {
	var seeds []uint64
	switch n.Kind {
	case yaml.ScalarNode:
		s, err := ParseSeeds(n.Value)
		if err != nil {
			return p.errf(n, "seeds", "%v", err)
		}
		seeds = s
	case yaml.SequenceNode:
		for _, e := range n.Content {
			v, err := strconv.ParseUint(e.Value, 10, 64)
			if e.Kind != yaml.ScalarNode || err != nil {
				return p.errf(e, "seeds", "%q is not a non-negative integer", e.Value)
			}
			if slices.Contains(seeds, v) {
				return p.errf(e, "seeds", "seed %d given twice", v)
			}
			seeds = append(seeds, v)
		}
	}
	if len(seeds) == 0 {
		return p.errf(n, "seeds", "want a list of seeds or a range such as 1-10")
	}
	p.cfg.Seeds = seeds
	return nil
}

// ParseSeeds parses "1-10", "3" or "1,2,5" (ranges and values may be
// mixed: "1-3,7").
func ParseSeeds(s string) ([]uint64, error) {
	var out []uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
		}
		if err1 != nil || err2 != nil || b < a || b-a > 1_000_000 {
			return nil, fmt.Errorf("seeds %q: %q is not a seed or an ascending range such as 1-10", s, part)
		}
		for v := a; v <= b; v++ {
			if slices.Contains(out, v) {
				return nil, fmt.Errorf("seeds %q: seed %d given twice", s, v)
			}
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no seeds")
	}
	return out, nil
}
