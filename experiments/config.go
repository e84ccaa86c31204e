package experiments

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/scenario"
)

// Config is a parsed, checked experiment configuration (a YAML file in
// experiments/). Every path in it is resolved; LoadConfig has checked that
// the files exist, that the names are known and that the values are in
// range. Checks that need the model (its input size) happen in Prepare.
// Every field but File is set by one key of the schema (schema.go), which
// also documents it: see CONFIG.md or amt config -ref.
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
	// package mr's relations), with the configured objective.
	Scenario scenario.Scenario
	// Objective is "paper" (the action set's own rewards) or "fault"
	// (scenario.Fault replaces them).
	Objective string
	Agents    []AgentSpec
	Seeds     []uint64
	Passes    int
	// Iterations caps each run (0 = Passes × images).
	Iterations  int
	LogInterval int
	// Timing puts measured times into summary.json (default: true online,
	// false in replay); timing.json always has them.
	Timing bool
	// Output is the results folder; Cache the sweep cache folder
	// (default .cache/amt). Both are relative to the working directory.
	Output, Cache string
	// Workers is the number of sweep workers (0 = kernels.Threads: the
	// cores amt computes on).
	Workers int
	// State, when set, is a folder of agent state files
	// (State/<agent id>/seed-<n>.state): each run continues from its file
	// when it exists and saves it afterwards (the paper's "load existing
	// or initialise new bandit", for continuous integration).
	State string
	// Gallery is the number of violating cases per MR drawn into
	// Output/gallery/ (0 = no gallery).
	Gallery int
	// Check configures amt check (Experiment.Check).
	Check CheckConfig
	// Tune, when it has seeds, is how amt tune chooses agents' options
	// (see TuneConfig).
	Tune TuneConfig
	// Regression, when it names a model, makes the experiment a
	// regression experiment: the SUT changes mid-stream (see
	// RegressionConfig).
	Regression RegressionConfig
	// Corruption, when it names a reference model, makes the experiment a
	// corruption report (see CorruptionConfig).
	Corruption CorruptionConfig
	// Power, when it has pairs, makes the configuration a gate power
	// study (see PowerConfig).
	Power PowerConfig
	// Logf, when set, receives device events: a model moving from a GPU
	// to the CPU, ops running on the CPU (see nn.LoadOptions). It is not
	// read from the file.
	Logf func(format string, args ...any)

	pos map[string]pos
	// doc is the document parsed: what the results folder keeps as the
	// snapshot config.yaml, and what their identity hashes.
	doc []byte
}

// DataConfig is the data set of an experiment.
type DataConfig struct {
	Format string // cifar10, idx, fashion-mnist, coco or folder
	Path   string // resolved
	Images string // COCO image folder (resolved), optional
	Labels string // IDX label file (resolved), optional
	Limit  int    // first Limit cases only (0 = all)
	// MaxPixels is the image budget (data.Spec.MaxPixels); 0 for CIFAR-10.
	MaxPixels int
}

// SUTConfig is the system under test.
type SUTConfig struct {
	Model string // resolved path of the ONNX model
	// InputWidth and InputHeight are the model's input size.
	InputWidth, InputHeight int
	Mean, Std               [3]float64
	// Layout, ChannelOrder and Scale are the input convention as
	// configured (sut.layout: auto, nchw or nhwc; sut.channel_order;
	// sut.scale); Prepare resolves an auto layout from the model's input
	// shape (see convention.go).
	Layout, ChannelOrder, Scale string
	// BatchSize caps the images per model run (0 = whole batches).
	BatchSize int
	// Labels, when set, is a file naming the classes, one per line in
	// class index order (classification; overrides the data set's names).
	Labels string
	// Device is where the model runs: cpu, cuda or cuda,cpu (see
	// nn.LoadOptions).
	Device string
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

// FeaturesConfig describes the context: an extractor's features and the
// grey-box block, concatenated.
type FeaturesConfig struct {
	// Kinds are the context's parts in order: model, phash or none (a
	// constant, alone only), then optionally sut (the grey-box block,
	// greybox.go), which comes last.
	Kinds []string
	Model string // resolved path (kind model)
	// Output names the model's tensor the features are read from (kind
	// model; empty = its single graph output). A 4-D [N, C, H, W] tensor
	// is averaged over H and W (global average pooling) to C features.
	Output string
	// Device is where the model runs (kind model): cpu, cuda or cuda,cpu.
	Device string
	// ChannelOrder, Scale, Mean and Std are the feature model's input
	// convention (kind model; its layout is read from its input shape),
	// as the sut keys of the same names; the defaults are the default
	// feature model's (RGB, [0, 1], ImageNet's mean and std).
	ChannelOrder, Scale string
	Mean, Std           [3]float64
}

// CheckConfig configures amt check: which agent runs, for how long, and
// the conditions that fail the check (see package gate).
type CheckConfig struct {
	// Agent is the id of the agent that runs (default: the first);
	// Seed the session's seed (default: the first of seeds).
	Agent string
	Seed  uint64
	// Budget is the session's iterations (0 = iterations, or passes ×
	// images); Time, when not zero, ends it earlier.
	Budget int
	Time   time.Duration
	// FailRate, when set, is the highest passing overall violation rate;
	// FailMR the highest passing rate per relation.
	FailRate *float64
	FailMR   map[string]float64
	// Baseline, when set, is the results folder of a previous run to
	// compare with; Margin (percentage points) and Alpha configure the
	// regression conditions.
	Baseline      string
	Margin, Alpha float64
	// Audit is the share of the budget spent on the audit sample (see
	// auditAgent), in [0, 1]; the regression test compares audit samples.
	Audit float64
}

// Conditions returns the check's conditions for package gate (regression
// conditions only with a baseline).
func (c CheckConfig) Conditions() gate.Conditions {
	g := gate.Conditions{Rate: c.FailRate, MR: c.FailMR}
	if c.Baseline != "" {
		g.Regression = &gate.Regression{MarginPP: c.Margin, Alpha: c.Alpha}
	}
	return g
}

// extractor returns the kind of the extractor part of the context, ""
// when the context is the grey-box block alone.
func (f FeaturesConfig) extractor() string {
	for _, k := range f.Kinds {
		if k != featuresSut {
			return k
		}
	}
	return ""
}

// sut reports whether the context ends with the grey-box block.
func (f FeaturesConfig) sut() bool { return slices.Contains(f.Kinds, featuresSut) }

// kind names the context in run metadata: the kinds joined by "+"
// ("model+sut").
func (f FeaturesConfig) kind() string { return strings.Join(f.Kinds, "+") }

// featuresSut is the kind of the grey-box block.
const featuresSut = "sut"

// AgentSpec is one agent of an experiment: a bandit agent name, options,
// and the id naming its result folder (default: the name).
type AgentSpec struct {
	ID, Name string
	Options  bandit.Options
}

type pos struct{ line, col int }

// A ConfigError is a problem with a configuration: the file, the position
// of the key (Line and Column are 1-based; 0 when unknown), the dotted key
// ("sut.input_size", "agents[1].options.hidden"; "" for a problem with the
// whole document) and what is wrong. Its message has the form
// file:line:column: key: problem.
type ConfigError struct {
	File         string
	Line, Column int
	Key          string
	Err          error
}

func (e *ConfigError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	if e.Key != "" {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// errAt returns a ConfigError at key's value (or, for a key the file does
// not give, at the nearest enclosing key it gives).
func (c *Config) errAt(key string, format string, args ...any) error {
	p, ok := c.pos[key]
	for k := key; !ok && k != ""; {
		k = parentKey(k)
		p, ok = c.pos[k]
	}
	return &ConfigError{File: c.File, Line: p.line, Column: p.col, Key: key, Err: fmt.Errorf(format, args...)}
}

// parentKey returns the key enclosing k ("sut" for "sut.model",
// "agents[1]" for "agents[1].id", "" at the top level).
func parentKey(k string) string {
	if i := strings.LastIndexAny(k, ".["); i >= 0 {
		return k[:i]
	}
	return ""
}

// maxConfigSize caps a configuration file: the shipped ones are a few
// kilobytes.
const maxConfigSize = 1 << 20

// LoadConfig reads and checks an experiment configuration. Unknown keys,
// missing keys, values of the wrong type or out of range, unknown agents,
// options or relations and missing files are *ConfigError values naming
// the file, the line and the key. Relative paths are looked up beside the
// config file first, then in the assets folder (assetsDir; "" means the
// default, see data.AssetsDir).
func LoadConfig(path, assetsDir string) (*Config, error) {
	b, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return parseConfig(b, path, assetsDir)
}

// readConfigFile reads a configuration file of at most maxConfigSize
// bytes; a missing or unreadable file is a *ConfigError naming it.
func readConfigFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the ConfigError names the file
		}
		return nil, &ConfigError{File: path, Err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if len(b) > maxConfigSize {
		return nil, &ConfigError{File: path, Err: fmt.Errorf("more than %d bytes; a configuration is a short YAML file", maxConfigSize)}
	}
	return b, nil
}

// yamlLine matches yaml.v3's syntax errors, "yaml: line 3: problem".
var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a YAML syntax error into a ConfigError with its line.
func yamlError(file string, err error) error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ConfigError{File: file, Line: line, Err: errors.New(m[2])}
	}
	return &ConfigError{File: file, Err: err}
}

// parseConfig parses a configuration document; name is its file name (for
// errors and for resolving relative paths).
func parseConfig(doc []byte, name, assetsDir string) (*Config, error) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(doc))
	err := dec.Decode(&root)
	if errors.Is(err, io.EOF) || (err == nil && len(root.Content) == 0) {
		return nil, &ConfigError{File: name, Err: errors.New("empty configuration; want a mapping of keys (amt config -ref lists them)")}
	}
	if err != nil {
		return nil, yamlError(name, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, &ConfigError{File: name, Line: extra.Line, Err: errors.New("a second YAML document; a configuration is one document")}
	} else if !errors.Is(err, io.EOF) {
		return nil, yamlError(name, err)
	}
	p := newParser(name, assetsDir)
	if err := p.mapping(root.Content[0], "", "", p.cfg); err != nil {
		return nil, err
	}
	p.cfg.doc = append([]byte(nil), doc...)
	return p.cfg, nil
}
