package experiments

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/nn"
	"github.com/amt-dev/amt/nn/preprocess"
	"github.com/amt-dev/amt/scenario"
)

// A key is one entry of the configuration schema: everything the parser,
// the reference (CONFIG.md, amt config -ref) and the tests know about a
// configuration key.
type key struct {
	// path is the key's dotted path; "[]" stands for the items of a list
	// ("agents[].id").
	path string
	// study, when set, is the only case study the key applies to; a key
	// may have one entry per case study.
	study string
	// required keys must be given (when they apply); the others take def,
	// or what compute sets, or the zero value.
	required bool
	// def is the default in YAML, read like a value given in the file.
	def string
	// compute sets a default that depends on keys read before; defDoc
	// says it in words for the reference.
	compute func(c *Config)
	defDoc  string
	// only, when set, limits the key to configurations where it holds
	// (given the keys before it); onlyDoc says when, in words.
	only    func(c *Config) bool
	onlyDoc string
	// check, when set, checks a given value against the keys read before
	// it, and returns the problem or "".
	check func(c *Config) string
	// doc is the key's meaning, one line, for the reference.
	doc string
	// val reads the value and says where it goes.
	val value
}

// name is the last element of the key's path.
func (k key) name() string { return k.path[strings.LastIndex(k.path, ".")+1:] }

// parent is the schema path of the mapping that holds the key ("" at the
// top level).
func (k key) parent() string {
	if i := strings.LastIndex(k.path, "."); i >= 0 {
		return k.path[:i]
	}
	return ""
}

func (k key) appliesTo(study string) bool { return k.study == "" || k.study == study }

// defNode returns the default as a YAML node.
func (k key) defNode() *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(k.def), &doc); err != nil || len(doc.Content) != 1 {
		panic(fmt.Sprintf("experiments: schema key %s: default %q is not one YAML value", k.path, k.def))
	}
	return doc.Content[0]
}

// children returns the keys of keys directly under schema path sp, in
// schema order.
func children(keys []key, sp string) []key {
	var out []key
	for _, k := range keys {
		if k.parent() == sp {
			out = append(out, k)
		}
	}
	return out
}

// schema is every configuration key, in reading order: a key's reader,
// default and checks see the keys before it. A new key is one entry here
// plus its Config field (and its use).
var schema = []key{
	{path: "name", required: true, val: bind(folderName("the results folder"), func(c *Config) *string { return &c.Name }),
		doc: "the experiment's name: results go to results/<name> (the shipped configurations are named after their files)"},
	{path: "description", val: bind(text(), func(c *Config) *string { return &c.Description }),
		doc: "one line on what the experiment is; copied to run.json and the report"},
	{path: "case_study", required: true, val: bind(oneOf(caseStudyNames), func(c *Config) *string { return &c.CaseStudy }),
		doc: "classification (violation iff the top-1 class changes) or detection (violation iff the per-image COCO AP@[.5:.95] drops more than sut.threshold; the data set must be COCO)"},
	{path: "mode", required: true, val: bind(oneOf(words("online", "replay")), func(c *Config) *string { return &c.Mode }),
		doc: "online runs the SUT inside the loop, as the paper (RQ3 measures its cost); replay looks the verdicts up in the cached exhaustive sweep (the same choices, seconds per run)"},

	{path: "data", required: true, val: section("a mapping"), doc: "the data set of source images"},
	{path: "data.format", required: true, val: bind(oneOf(words("cifar10", "idx", "fashion-mnist", "coco", "folder")), func(c *Config) *string { return &c.Data.Format }),
		check: func(c *Config) string {
			if c.CaseStudy == studyDetection && c.Data.Format != "coco" {
				return fmt.Sprintf("%q: a detection experiment needs ground-truth boxes, i.e. format coco", c.Data.Format)
			}
			return ""
		},
		doc: "cifar10 (the official binary records), idx (MNIST's IDX format, gzipped or plain: grey images, read as RGB with R = G = B, so grayscale is the identity on them), fashion-mnist (idx with Fashion-MNIST's class names; Debian's dataset-fashion-mnist installs the files in /usr/share/datasets/fashion-mnist/), coco (an instances JSON with its JPEG folder; images without annotations always pass) or folder (PNG/JPEG images sorted by name, unlabelled)"},
	{path: "data.path", required: true, val: bind(filePath(func(c *Config) bool { return c.Data.Format == "folder" }), func(c *Config) *string { return &c.Data.Path }),
		doc: "the CIFAR-10 .bin file, the IDX image file (e.g. t10k-images-idx3-ubyte.gz), the COCO instances .json file or the image folder"},
	{path: "data.labels", only: func(c *Config) bool { return c.Data.Format == "idx" || c.Data.Format == "fashion-mnist" }, onlyDoc: "data.format is idx or fashion-mnist",
		defDoc: "the image file's name with images-idx3 replaced by labels-idx1, when that file exists (else unlabelled)", val: bind(filePath(nil), func(c *Config) *string { return &c.Data.Labels }),
		doc: "the IDX label file"},
	{path: "data.images", only: func(c *Config) bool { return c.Data.Format == "coco" }, onlyDoc: "data.format is coco",
		defDoc: "the JSON file's folder", val: bind(filePath(func(*Config) bool { return true }), func(c *Config) *string { return &c.Data.Images }),
		doc: "the COCO image folder"},
	{path: "data.max_pixels", only: func(c *Config) bool { return c.Data.Format == "coco" || c.Data.Format == "folder" }, onlyDoc: "data.format is coco or folder",
		def: strconv.Itoa(data.DefaultMaxPixels), val: bind(intIn(1, 1<<36), func(c *Config) *int { return &c.Data.MaxPixels }),
		doc: "the image budget: an image of more pixels (width × height, read from its header before any pixel is decoded) is refused when the data set is opened; the default admits 8K frames and bounds a sweep worker's memory (see the README)"},
	{path: "data.limit", def: "0", val: bind(intIn(0, math.MaxInt32), func(c *Config) *int { return &c.Data.Limit }),
		doc: "use the first N images only (0 = all); a limited sweep reads and extends the cache of the whole data set"},

	{path: "sut", required: true, val: section("a mapping"), doc: "the system under test"},
	{path: "sut.model", required: true, val: bind(filePath(nil), func(c *Config) *string { return &c.SUT.Model }),
		doc: "the ONNX model: a classifier with logits [N, classes] as its first output, or (detection) a single-stage detector with raw YOLO heads"},
	{path: "sut.input_size", study: studyClassification, defDoc: "the model's, where its input shape fixes it", val: inputSize(func(c *Config) (*int, *int) { return &c.SUT.InputWidth, &c.SUT.InputHeight }),
		doc: "the model's input size, checked against the model; images are resized to it (Pillow bilinear)"},
	{path: "sut.layout", study: studyClassification, def: "auto", val: bind(oneOf(words(layoutNames...)), func(c *Config) *string { return &c.SUT.Layout }),
		doc: layoutDoc},
	{path: "sut.channel_order", study: studyClassification, def: "rgb", val: bind(oneOf(words(preprocess.ChannelOrders...)), func(c *Config) *string { return &c.SUT.ChannelOrder }),
		doc: channelOrderDoc},
	{path: "sut.scale", study: studyClassification, def: "unit", val: bind(oneOf(words(preprocess.Scales...)), func(c *Config) *string { return &c.SUT.Scale }),
		doc: scaleDoc},
	{path: "sut.input_size", study: studyDetection, def: "416", val: inputSize(func(c *Config) (*int, *int) { return &c.SUT.InputWidth, &c.SUT.InputHeight }),
		check: func(c *Config) string {
			if c.SUT.InputWidth != c.SUT.InputHeight {
				return fmt.Sprintf("a detector takes a square letterboxed input; got %d×%d", c.SUT.InputWidth, c.SUT.InputHeight)
			}
			return ""
		},
		doc: "the side of the square letterboxed input"},
	{path: "sut.mean", study: studyClassification, compute: defaultMean, defDoc: meanDefDoc, val: bind(rgbTriple(false), func(c *Config) *[3]float64 { return &c.SUT.Mean }),
		doc: "per-channel mean (R, G, B, whatever sut.channel_order) subtracted after scaling pixels by sut.scale, in its units"},
	{path: "sut.std", study: studyClassification, compute: defaultStd, defDoc: stdDefDoc, val: bind(rgbTriple(true), func(c *Config) *[3]float64 { return &c.SUT.Std }),
		doc: "per-channel standard deviation (R, G, B) dividing the centred values"},
	{path: "sut.batch_size", study: studyClassification, def: "0", val: bind(intIn(0, 1<<16), func(c *Config) *int { return &c.SUT.BatchSize }),
		doc: "the most images per model run (0 = a whole batch: an image and all its follow-ups)"},
	{path: "sut.labels", study: studyClassification, val: bind(filePath(nil), func(c *Config) *string { return &c.SUT.Labels }),
		doc: "a text file naming the classes, one per line in class index order, for reports and the gallery (default: the data set's names, e.g. CIFAR-10's batches.meta.txt; a folder of images has none)"},
	{path: "sut.device", def: "cpu", val: bind(oneOf(nn.DeviceNames), func(c *Config) *string { return &c.SUT.Device }),
		doc: "where the model runs: cpu, cuda (an NVIDIA GPU, in an amt built with -tags gpu; a failure of the GPU stops the run) or cuda,cpu (the GPU, and the CPU from the first failure on); tables computed on a GPU are cached apart"},
	{path: "sut.score_threshold", study: studyDetection, def: "0.005", val: bind(floatIn(0, 1), func(c *Config) *float64 { return &c.SUT.Detection.ScoreThreshold }),
		doc: "detections scoring less are dropped"},
	{path: "sut.nms_iou", study: studyDetection, def: "0.45", val: bind(floatIn(0, 1), func(c *Config) *float64 { return &c.SUT.Detection.NMSIoU }),
		doc: "per-class non-maximum suppression drops a box overlapping a better one by more than this IoU"},
	{path: "sut.max_detections", study: studyDetection, def: "100", val: bind(intIn(1, 1<<20), func(c *Config) *int { return &c.SUT.Detection.MaxDetections }),
		doc: "detections kept per image, best first (COCO's maxDets)"},
	{path: "sut.threshold", study: studyDetection, def: "0.05", val: bind(floatIn(0, 1), func(c *Config) *float64 { return &c.SUT.Detection.Threshold }),
		doc: "the verdict's tolerated AP drop: a violation iff AP(follow-up) < AP(source) − threshold (the paper's 0.05)"},

	{path: "features", required: true, val: section("a mapping"), doc: "the context features the agents see"},
	{path: "features.kind", required: true, val: bind(contextKinds(), func(c *Config) *[]string { return &c.Features.Kinds }),
		doc: "model (an ONNX feature model's output for the source image), phash (its 256-bit perceptual hash), none (a constant 1: context-free agents) or sut (the grey-box block: what the SUT answered on the source image: softmax and top-1 − top-2 logit margin of a classifier, a 7-value summary of a detector's detections); a list concatenates, sut last: [model, sut]"},
	{path: "features.model", required: true, only: func(c *Config) bool { return slices.Contains(c.Features.Kinds, "model") }, onlyDoc: "features.kind has model",
		val: bind(filePath(nil), func(c *Config) *string { return &c.Features.Model }),
		doc: "the ONNX feature model: one output row per image (the shipped one, features512_squeezenet1_1.onnx, is the 512-d trunk of the SqueezeNet SUT itself)"},
	{path: "features.output", only: func(c *Config) bool { return slices.Contains(c.Features.Kinds, "model") }, onlyDoc: "features.kind has model",
		defDoc: "the model's single graph output", val: bind(nonEmpty("a tensor name"), func(c *Config) *string { return &c.Features.Output }),
		doc: "the model's tensor the features are read from: any tensor its graph computes, intermediate ones included (a misspelt name gets the list with shapes); an [N, C, H, W] feature map is averaged over H × W to C features (global average pooling), e.g. /GlobalAveragePool_output_0 of cifar10_resnet56.onnx, 64 features from a network other than the SUT"},
	{path: "features.device", def: "cpu", only: func(c *Config) bool { return slices.Contains(c.Features.Kinds, "model") }, onlyDoc: "features.kind has model",
		val: bind(oneOf(nn.DeviceNames), func(c *Config) *string { return &c.Features.Device }),
		doc: "where the feature model runs, as sut.device"},
	{path: "features.channel_order", def: "rgb", only: hasFeatureModel, onlyDoc: "features.kind has model",
		val: bind(oneOf(words(preprocess.ChannelOrders...)), func(c *Config) *string { return &c.Features.ChannelOrder }),
		doc: "the feature model's channel order, as sut.channel_order (its layout is read from its input shape)"},
	{path: "features.scale", def: "unit", only: hasFeatureModel, onlyDoc: "features.kind has model",
		val: bind(oneOf(words(preprocess.Scales...)), func(c *Config) *string { return &c.Features.Scale }),
		doc: "the feature model's pixel scale, as sut.scale"},
	{path: "features.mean", compute: defaultFeatureMean, defDoc: featureMeanDefDoc, only: hasFeatureModel, onlyDoc: "features.kind has model",
		val: bind(rgbTriple(false), func(c *Config) *[3]float64 { return &c.Features.Mean }),
		doc: "the feature model's per-channel mean (R, G, B), as sut.mean"},
	{path: "features.std", compute: defaultFeatureStd, defDoc: featureStdDefDoc, only: hasFeatureModel, onlyDoc: "features.kind has model",
		val: bind(rgbTriple(true), func(c *Config) *[3]float64 { return &c.Features.Std }),
		doc: "the feature model's per-channel standard deviation (R, G, B), as sut.std"},

	{path: "action_set", required: true, val: bind(actionSet(), func(c *Config) *scenario.Scenario { return &c.Scenario }),
		doc: "what the agents choose from: a built-in scenario (amt mrs lists them) or a mapping defining one"},
	{path: "action_set.name", required: true, val: bind(nonEmpty("a name"), func(s *scenarioSpec) *string { return &s.Name }),
		doc: "the scenario's name in result files"},
	{path: "action_set.reward", def: scenario.Paper.Name, val: bind(oneOf(scenario.ObjectiveNames), func(s *scenarioSpec) *string { return &s.Reward }),
		doc: "the objective: " + objectiveDocs()},
	{path: "action_set.arms", required: true, val: bind(arms(), func(s *scenarioSpec) *[]scenario.Arm { return &s.Arms }),
		doc: "the arms; an arm with several parameter values gets a parameter bandit, one with one value is flat"},
	{path: "action_set.arms[].mr", required: true, val: bind(oneOf(mr.Names), func(a *scenario.Arm) *string { return &a.Action }),
		doc: "the arm's relation (amt mrs lists them with their parameter, unit and range)"},
	{path: "action_set.arms[].params", val: bind(grid(), func(a *scenario.Arm) *[]float64 { return &a.Values }),
		doc: "the parameter values, in the relation's unit; a relation without a parameter takes none"},
	{path: "action_set.arms[].name", defDoc: "the relation, or relation:value for one value", val: bind(nonEmpty("a name"), func(a *scenario.Arm) *string { return &a.Name }),
		doc: "the arm's name in result files"},
	{path: "objective", def: "paper", val: objective(),
		doc: "what the agents are rewarded for: paper (the action set's own rewards, the paper's for the built-in ones) or fault (" + scenario.Fault.Doc + ")"},

	{path: "agents", required: true, val: bind(agentList(), func(c *Config) *[]AgentSpec { return &c.Agents }),
		doc: "the agents to run, each over every seed: a name (- cover), a name with options (- cover: {hidden: 0}), or a mapping of name, id and options; see Agents below"},
	{path: "agents[].name", required: true, val: bind(agentNameReader(), func(a *AgentSpec) *string { return &a.Name }),
		doc: "the agent"},
	{path: "agents[].id", defDoc: "the name", val: bind(folderName("the agent's results folder"), func(a *AgentSpec) *string { return &a.ID }),
		doc: "names the agent's results folder; agents must have distinct ids"},
	{path: "agents[].options", val: bind(agentOptions(), func(a *AgentSpec) *bandit.Options { return &a.Options }),
		doc: "options overriding the agent's defaults (see Agents below)"},

	{path: "seeds", required: true, val: bind(seedList(), func(c *Config) *[]uint64 { return &c.Seeds }),
		doc: "one run per seed and agent; the seed fixes the image order and the agent's randomness"},
	{path: "passes", def: "1", val: bind(intIn(1, 1000), func(c *Config) *int { return &c.Passes }),
		doc: "passes over the images per run; each visits every image once, in an order shuffled by the seed"},
	{path: "iterations", def: "0", val: bind(intIn(0, math.MaxInt32), func(c *Config) *int { return &c.Iterations }),
		check: func(c *Config) string {
			if c.Data.Limit > 0 && c.Iterations > c.Passes*c.Data.Limit {
				return fmt.Sprintf("%d is more than passes × data.limit = %d", c.Iterations, c.Passes*c.Data.Limit)
			}
			return ""
		},
		doc: "iterations per run (0 = passes × images)"},
	{path: "log_interval", def: "100", val: bind(intIn(1, math.MaxInt32), func(c *Config) *int { return &c.LogInterval }),
		doc: "iterations between the lines of the progress logs seed-<n>.jsonl (one is always written after the last)"},
	{path: "timing", compute: func(c *Config) { c.Timing = c.Mode == "online" }, defDoc: "true in mode online, false in replay",
		val: bind(boolean(), func(c *Config) *bool { return &c.Timing }),
		doc: "put measured times into summary.json; they always go to timing.json, and without them the same config and seeds give byte-identical results"},
	{path: "output", compute: func(c *Config) { c.Output = filepath.Join("results", c.Name) }, defDoc: "results/<name>",
		val: bind(folderPath(), func(c *Config) *string { return &c.Output }),
		doc: "the results folder, relative to the working directory"},
	{path: "cache", def: ".cache/amt", val: bind(folderPath(), func(c *Config) *string { return &c.Cache }),
		doc: "the sweep cache folder, relative to the working directory; entries are keyed by the content of the models and data"},
	{path: "workers", def: "0", val: bind(intIn(0, 1024), func(c *Config) *int { return &c.Workers }),
		doc: "concurrent sweep workers, each with its own copy of the model (0 = one per core)"},
	{path: "state", defDoc: "none: every run starts afresh", val: bind(folderPath(), func(c *Config) *string { return &c.State }),
		doc: "a folder of agent state files <state>/<agent id>/seed-<n>.state: each run continues from its file when there is one and saves it afterwards (the paper's \"load existing or initialise new bandit\", for continuous integration). A state file carries a SHA-256 of its contents and every loaded number is range-checked (no NaN or infinite weight, counts >= 0, the configured learning rate): a corrupt, truncated or edited file, or one of an older format (before version 3), is an error naming the file and what is wrong, never silently reused; delete it to start afresh. A run locks each state file (<state file>.lock) from loading it to saving it; a second run on the same state file fails at once, naming the lock, instead of losing one run's learning"},
	{path: "gallery", def: "6", val: bind(intIn(0, 100), func(c *Config) *int { return &c.Gallery }),
		doc: "violating cases per MR drawn into gallery/<agent>/<mr>.png (source and follow-up side by side): amt check draws its session's first ones, amt run those of the first agent's first seed; 0 = no gallery"},

	{path: "check", compute: func(c *Config) { c.Check = defaultCheck(c) }, defDoc: "the defaults of its keys",
		val: section("a mapping"), doc: "amt check, the test gate for continuous integration: an online session with a budget, then pass/fail conditions (exit status 0 pass, 1 fail)"},
	{path: "check.agent", compute: func(c *Config) { c.Check.Agent = c.Agents[0].ID }, defDoc: "the first agent",
		val: bind(nonEmpty("an agent id of agents"), func(c *Config) *string { return &c.Check.Agent }),
		check: func(c *Config) string {
			var ids []string
			for _, a := range c.Agents {
				ids = append(ids, a.ID)
			}
			if !slices.Contains(ids, c.Check.Agent) {
				return fmt.Sprintf("%q is not the id of an agent of agents (%s)%s", c.Check.Agent, strings.Join(ids, ", "), suggest.DidYouMean(c.Check.Agent, ids))
			}
			return ""
		},
		doc: "the agent that tests (its state is loaded from and saved to state)"},
	{path: "check.seed", compute: func(c *Config) { c.Check.Seed = c.Seeds[0] }, defDoc: "the first of seeds",
		val: bind(uintValue(), func(c *Config) *uint64 { return &c.Check.Seed }),
		doc: "the session's seed: it fixes the image order and the agent's draws, and names the state file"},
	{path: "check.budget", def: "0", val: bind(intIn(0, math.MaxInt32), func(c *Config) *int { return &c.Check.Budget }),
		check: func(c *Config) string {
			if c.Data.Limit > 0 && c.Check.Budget > c.Passes*c.Data.Limit {
				return fmt.Sprintf("%d is more than passes × data.limit = %d", c.Check.Budget, c.Passes*c.Data.Limit)
			}
			return ""
		},
		doc: "the session's iterations (0 = iterations, or passes × images); amt check -budget overrides it"},
	{path: "check.time", val: bind(duration(), func(c *Config) *time.Duration { return &c.Check.Time }),
		defDoc: "none", doc: "a wall-clock budget (1m30s): the session ends after the iteration during which it ran out, or at the iteration budget; amt check -time overrides it"},
	{path: "check.fail_on", val: section("a mapping"), doc: "absolute conditions: the check fails when a violation rate exceeds its limit"},
	{path: "check.fail_on.violation_rate", val: bind(optRate(), func(c *Config) **float64 { return &c.Check.FailRate }),
		defDoc: "none", doc: "the highest passing overall violation rate of the session (a fraction: 0.3 = 30 %)"},
	{path: "check.fail_on.mr", val: bind(mrRates(), func(c *Config) *map[string]float64 { return &c.Check.FailMR }),
		defDoc: "none", doc: "the highest passing violation rate per relation of the action set ({flipud: 0.6}); a relation the session did not try is skipped"},
	{path: "check.baseline", val: bind(folderPath(), func(c *Config) *string { return &c.Check.Baseline }),
		defDoc: "none", doc: "the results folder of a previous amt check with an audit sample (check.audit > 0) to compare with, relative to the working directory; amt check -baseline overrides it"},
	{path: "check.regression", compute: func(c *Config) { c.Check.Margin, c.Check.Alpha = 2, 0.05 }, defDoc: "the defaults of its keys",
		val: section("a mapping"), doc: "regression conditions (with a baseline): an MR fails when its violation rate rose by more than margin with statistical support"},
	{path: "check.regression.margin", def: "2", val: bind(floatIn(0, 100), func(c *Config) *float64 { return &c.Check.Margin }),
		doc: "the tolerated rise of an MR's violation rate, in percentage points (stratified by parameter value)"},
	{path: "check.regression.alpha", def: "0.05", val: bind(openUnit(), func(c *Config) *float64 { return &c.Check.Alpha }),
		doc: "the significance level of the one-sided exact tests, after Holm's adjustment over the MRs compared"},

	{path: "check.audit", def: "1", val: bind(floatIn(0, 1), func(c *Config) *float64 { return &c.Check.Audit }),
		doc: "the share of the budget spent on the audit sample, whose follow-ups are drawn uniformly (a uniform arm, then a uniform value), whatever the images and the verdicts; the agent chooses the others; the regression test compares the audit samples of the two checks only (the agent's follow-ups are no sample of one population: it seeks violations); 1 (the default, the most powerful per model run: see results/gate-power) leaves the agent nothing to choose, 0 no regression test"},

	{path: "tune", val: section("a mapping"), check: tuneSection,
		doc: "hyper-parameter tuning (amt tune): each grid's settings run on the tuning seeds, the best mean violation rate is chosen, then every agent runs on seeds with the chosen options (mode replay; amt run refuses the file)"},
	{path: "tune.seeds", required: true, val: bind(seedList(), func(c *Config) *[]uint64 { return &c.Tune.Seeds }), check: tuneSeeds,
		doc: "the tuning seeds, disjoint from seeds (e.g. 101-130): the choice never sees the seeds it is evaluated on"},
	{path: "tune.grid", required: true, val: bind(tuneGrids(), func(c *Config) *[]TuneGrid { return &c.Tune.Grid }),
		doc: "the grids, one per tuned agent; agents without a grid run as configured"},
	{path: "tune.grid[].agent", required: true, val: bind(tunedAgent(), func(g *TuneGrid) *string { return &g.Agent }),
		doc: "the id of the agent to tune"},
	{path: "tune.grid[].options", required: true, val: gridOptions(),
		doc: "each tuned option with its candidate values ({alpha: [0.01, 0.1, 1], lambda: [1, 10]}: every combination is a setting, at most 1000); options set in agents stay fixed"},

	{path: "regression", val: section("a mapping"), check: regressionSection,
		doc: "a regression experiment (the paper's continuous-integration setting): after passes over the images on sut, the SUT changes to regression.sut for regression.passes more (the seed's next passes, same images); every agent runs twice, as <id>-carried (continuing with the state saved at the change) and <id>-fresh (a new agent at the change)"},
	{path: "regression.sut", required: true, val: otherSUT(func(c *Config) *SUTConfig { return &c.Regression.SUT }),
		doc: "the SUT after the change: the keys of sut (model, input_size, …), read and checked as there"},
	{path: "regression.passes", def: "1", val: bind(intIn(1, 1000), func(c *Config) *int { return &c.Regression.Passes }),
		doc: "passes over the images after the change"},
	{path: "regression.window", def: "200", val: bind(intIn(1, math.MaxInt32), func(c *Config) *int { return &c.Regression.Window }),
		doc: "the first iterations after the change whose violation rate the report gives (how fast an agent adapts)"},

	{path: "corruption", val: section("a mapping"), check: corruptionSection,
		doc: "a corruption report (case_study classification, a corruptions action set): the sweep also sweeps corruption.reference, and amt plot gives per corruption and severity the top-1 error and violation rate, CE, mCE and relative mCE against the reference (Hendrycks & Dietterich, ICLR 2019), and each agent's estimate of the error profile from the follow-ups it chose against the exhaustive one"},
	{path: "corruption.reference", required: true, val: otherSUT(func(c *Config) *SUTConfig { return &c.Corruption.Reference }),
		doc: "the reference SUT the corruption errors are normalised by: the keys of sut (model, input_size, …), read and checked as there; naming the SUT's own model gives CE = 100 % for every corruption"},
	{path: "corruption.audit", def: "0", val: bind(floatIn(0, 1), func(c *Config) *float64 { return &c.Corruption.Audit }),
		doc: "the share of every run's follow-ups spent on an audit sample, drawn uniformly (a uniform corruption, then a uniform severity) whatever the images and the verdicts, as amt check's check.audit; the agent chooses the others and never sees them; a run with an audit sample estimates the error profile from it alone (a uniform sample: unbiased), while the agent seeks violations with the rest; 0: the estimate comes from the agent's own follow-ups"},
	{path: "power", val: section("a mapping"), check: powerSection,
		doc: "a gate power study (amt gate-power): the CI cycle of amt check (a check of the old model, then one of the new model continuing from its state, with its results as the baseline) replayed from the models' cached sweeps for every pair, budget, follow-up design (the check agent, the agent with an audit sample, random, round-robin) and cycle seed; sut.model is replaced by each pair's models"},
	{path: "power.pairs", required: true, val: bind(powerPairs(), func(c *Config) *[]PowerPairConfig { return &c.Power.Pairs }),
		doc: "the model changes, old → new, each a mapping of name, old, new, reseed and regressed"},
	{path: "power.pairs[].name", required: true, val: bind(folderName("the pair in the report"), func(p *PowerPairConfig) *string { return &p.Name }),
		doc: "the pair's name in the outcomes and the report"},
	{path: "power.pairs[].old", required: true, val: bind(filePath(nil), func(p *PowerPairConfig) *string { return &p.Old }),
		doc: "the ONNX model checked first (sut's other keys apply)"},
	{path: "power.pairs[].new", required: true, val: bind(filePath(nil), func(p *PowerPairConfig) *string { return &p.New }),
		doc: "the ONNX model checked second, against the first check's results"},
	{path: "power.pairs[].reseed", def: "false", val: bind(boolean(), func(p *PowerPairConfig) *bool { return &p.Reseed }),
		doc: "give the second check another seed (derived from the cycle's); otherwise both use the cycle's, as a CI job whose check.seed is fixed"},
	{path: "power.pairs[].regressed", defDoc: "none: a change that should pass", val: bind(regressedRelation(), func(p *PowerPairConfig) *string { return &p.Regressed }),
		doc: "the relation the change regressed: the check should fail, on it"},
	{path: "power.budgets", def: "[50, 100, 200, 500, 1000]", val: bind(budgetList(), func(c *Config) *[]int { return &c.Power.Budgets }),
		doc: "the iterations of each check (model runs), ascending"},
	{path: "power.cycles", required: true, val: bind(seedList(), func(c *Config) *[]uint64 { return &c.Power.Cycles }),
		doc: "the cycle seeds (1-100): one CI cycle per pair, design, budget and seed; a cycle's seed is both checks' check.seed"},
	{path: "power.audit", def: "0.5", val: bind(openUnit(), func(c *Config) *float64 { return &c.Power.Audit }),
		doc: "the audit share of the design adaptive+audit (the check agent steering the rest)"},
}

// defaultCheck is the check section's defaults.
func defaultCheck(c *Config) CheckConfig {
	return CheckConfig{Agent: c.Agents[0].ID, Seed: c.Seeds[0], Margin: 2, Alpha: 0.05, Audit: 1}
}

// objectiveDocs describes the objectives a scenario may name.
func objectiveDocs() string {
	var parts []string
	for _, o := range scenario.Objectives() {
		parts = append(parts, o.Name+" ("+o.Doc+")")
	}
	return strings.Join(parts, "; ")
}
