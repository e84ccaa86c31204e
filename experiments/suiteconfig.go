package experiments

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/mr"
)

// SuiteConfig is a parsed agent benchmark (amt suite): systems under test,
// each an exhaustive table, times scenarios times objectives make its
// environments; every agent runs on every environment once per seed.
// Every SUT entry is read with the experiment schema (its data, sut and
// features keys, errors and defaults), so adding a system under test is one
// entry naming an ONNX model, its data and its preprocessing.
type SuiteConfig struct {
	File, Name, Description string
	// Output is the results folder (default results/<name>); Cache the
	// sweep cache, shared with the experiments (default .cache/amt).
	Output, Cache string
	// Scenarios are built-in scenario names; Objectives "paper" or "fault".
	Scenarios, Objectives []string
	Agents                []AgentSpec
	Seeds                 []uint64
	// Recommended is the id of the agent whose claims the report checks;
	// Reference the id of the random-selection agent the normalised
	// scores and "never worse than" claims compare with.
	Recommended, Reference string
	// Tune, when it has seeds, chooses agents' options on the suite, as
	// amt tune does on one table: every setting of an agent's grid runs on
	// every environment with the tuning seeds, the setting of the best mean
	// normalised score over the environments is chosen, and the agent runs
	// with it on Seeds, which the tuning never saw.
	Tune TuneConfig
	// Workers is the number of agent runs at a time (0 = the cores).
	Workers int
	// SUTs are the systems under test, each an experiment configuration
	// (mode replay, action set hierarchical: its sweep holds every built-in
	// scenario's follow-ups).
	SUTs []*Config
}

// suiteKeys are the top-level keys of a suite configuration, and sutKeys
// those of one entry of suts (the rest of an experiment comes from the
// suite).
var (
	suiteKeys = []string{"name", "description", "output", "cache", "scenarios", "objectives", "agents", "seeds", "tune", "recommended", "reference", "workers", "features", "suts"}
	sutKeys   = []string{"name", "case_study", "data", "sut", "features"}
)

// LoadSuite reads and checks a suite configuration. Errors are
// *ConfigError values naming the file, line, column and key
// ("suts[3].sut.model"), as LoadConfig's.
func LoadSuite(path, assetsDir string) (*SuiteConfig, error) {
	b, err := readConfigFile(path)
	if err != nil {
		return nil, err
	}
	return parseSuite(b, path, assetsDir)
}

// parseSuite is LoadSuite on the document b of the file path.
func parseSuite(b []byte, path, assetsDir string) (*SuiteConfig, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(path, err)
	}
	if len(root.Content) == 0 {
		return nil, &ConfigError{File: path, Err: errors.New("empty suite configuration")}
	}
	top := root.Content[0]
	errf := func(n *yaml.Node, key, format string, args ...any) error {
		return &ConfigError{File: path, Line: n.Line, Column: n.Column, Key: key, Err: fmt.Errorf(format, args...)}
	}
	given, err := strictKeys(top, "", suiteKeys, errf)
	if err != nil {
		return nil, err
	}
	for _, k := range []string{"name", "agents", "seeds", "features", "suts"} {
		if given[k] == nil {
			return nil, errf(top, k, "missing required key")
		}
	}
	s := &SuiteConfig{File: path, Name: given["name"].Value, Cache: ".cache/amt", Reference: "random",
		Scenarios: []string{"hierarchical"}, Objectives: []string{"paper"}}
	if s.Name == "" || strings.ContainsAny(s.Name, "/\\\x00") {
		return nil, errf(given["name"], "name", "%q: want a plain name", s.Name)
	}
	s.Output = filepath.Join("results", s.Name)
	for _, f := range []struct {
		key string
		dst *string
	}{{"description", &s.Description}, {"output", &s.Output}, {"cache", &s.Cache}, {"recommended", &s.Recommended}, {"reference", &s.Reference}} {
		if n := given[f.key]; n != nil {
			if n.Kind != yaml.ScalarNode || n.Value == "" || strings.ContainsRune(n.Value, 0) {
				return nil, errf(n, f.key, "want a non-empty string, got %s", kindName(n))
			}
			*f.dst = n.Value
		}
	}
	if n := given["workers"]; n != nil {
		var w int
		if n.Kind != yaml.ScalarNode || n.Decode(&w) != nil || w < 0 || w > 1024 {
			return nil, errf(n, "workers", "want an integer in [0, 1024], got %s", kindName(n))
		}
		s.Workers = w
	}
	for _, l := range []struct {
		key   string
		dst   *[]string
		known []string
	}{{"scenarios", &s.Scenarios, mr.BuiltinNames()}, {"objectives", &s.Objectives, []string{"paper", "fault"}}} {
		n := given[l.key]
		if n == nil {
			continue
		}
		if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
			return nil, errf(n, l.key, "want a non-empty list of %s, got %s", strings.Join(l.known, ", "), kindName(n))
		}
		*l.dst = nil
		for i, c := range n.Content {
			key := fmt.Sprintf("%s[%d]", l.key, i)
			if c.Kind != yaml.ScalarNode || !slices.Contains(l.known, c.Value) {
				return nil, errf(c, key, "%s: want one of %s%s", kindName(c), strings.Join(l.known, ", "), suggest.DidYouMean(c.Value, l.known))
			}
			if slices.Contains(*l.dst, c.Value) {
				return nil, errf(c, key, "%q given twice", c.Value)
			}
			*l.dst = append(*l.dst, c.Value)
		}
	}
	suts := given["suts"]
	if suts.Kind != yaml.SequenceNode || len(suts.Content) == 0 {
		return nil, errf(suts, "suts", "want a non-empty list of systems under test, got %s", kindName(suts))
	}
	names := map[string]bool{}
	for i, n := range suts.Content {
		key := fmt.Sprintf("suts[%d]", i)
		sg, err := strictKeys(n, key, sutKeys, errf)
		if err != nil {
			return nil, err
		}
		for _, k := range []string{"name", "case_study", "data", "sut"} {
			if sg[k] == nil {
				return nil, errf(n, key+"."+k, "missing required key")
			}
		}
		name := sg["name"].Value
		if name == "" || strings.ContainsAny(name, "/\\\x00 ") || names[name] {
			return nil, errf(sg["name"], key+".name", "%q: want a plain name, unique in the suite", name)
		}
		names[name] = true
		features := given["features"]
		if sg["features"] != nil {
			features = sg["features"]
		}
		doc := mappingNode(
			"name", scalarAt(s.Name+"-"+name, sg["name"]),
			"case_study", sg["case_study"],
			"mode", scalarAt("replay", n),
			"data", sg["data"],
			"sut", sg["sut"],
			"features", features,
			"action_set", scalarAt("hierarchical", n),
			"agents", given["agents"],
			"seeds", given["seeds"],
		)
		if given["tune"] != nil {
			doc.Content = append(doc.Content, mappingNode("tune", given["tune"]).Content...)
		}
		doc.Content = append(doc.Content, mappingNode(
			"output", scalarAt(filepath.Join(s.Output, "suts", name), n),
			"cache", scalarAt(s.Cache, n),
		).Content...)
		raw, err := yaml.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("suite: %w", err)
		}
		p := newParser(path, assetsDir)
		if err := p.mapping(doc, "", "", p.cfg); err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) && ce.Key != "" && !strings.HasPrefix(ce.Key, "agents") && !strings.HasPrefix(ce.Key, "seeds") && !strings.HasPrefix(ce.Key, "tune") && !(sg["features"] == nil && strings.HasPrefix(ce.Key, "features")) {
				ce.Key = key + "." + ce.Key
			}
			return nil, err
		}
		p.cfg.doc = raw
		s.SUTs = append(s.SUTs, p.cfg)
	}
	first := s.SUTs[0]
	s.Agents, s.Seeds, s.Tune = first.Agents, first.Seeds, first.Tune
	ids := make([]string, len(s.Agents))
	for i, a := range s.Agents {
		ids[i] = a.ID
	}
	if !slices.Contains(ids, s.Reference) {
		return nil, errf(given["agents"], "reference", "the reference agent %q is not among the agents (%s)", s.Reference, strings.Join(ids, ", "))
	}
	if s.Recommended != "" && !slices.Contains(ids, s.Recommended) {
		return nil, errf(given["recommended"], "recommended", "%q is not among the agents (%s)%s", s.Recommended, strings.Join(ids, ", "), suggest.DidYouMean(s.Recommended, ids))
	}
	return s, nil
}

// IsSuite reports whether the configuration file at path is a suite's
// (its top level has the key suts) rather than an experiment's.
func IsSuite(path string) bool {
	b, err := readConfigFile(path)
	if err != nil {
		return false
	}
	var root yaml.Node
	if yaml.Unmarshal(b, &root) != nil || len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return false
	}
	top := root.Content[0]
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "suts" {
			return true
		}
	}
	return false
}

// strictKeys returns the values of mapping n's keys, refusing keys not in
// known (with a suggestion) and keys given twice; key is n's dotted path.
func strictKeys(n *yaml.Node, key string, known []string, errf func(*yaml.Node, string, string, ...any) error) (map[string]*yaml.Node, error) {
	where := key
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		return nil, errf(n, where, "want a mapping of keys, got %s", kindName(n))
	}
	given := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		full := join(key, k.Value)
		if k.Kind != yaml.ScalarNode || !slices.Contains(known, k.Value) {
			return nil, errf(k, full, "unknown key%s (known keys: %s)", suggest.DidYouMean(k.Value, known), strings.Join(known, ", "))
		}
		if given[k.Value] != nil {
			return nil, errf(k, full, "key given twice")
		}
		given[k.Value] = n.Content[i+1]
	}
	return given, nil
}

// mappingNode returns a YAML mapping of the key/value pairs kv (a string
// key, then a *yaml.Node value).
func mappingNode(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i < len(kv); i += 2 {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i].(string)}, kv[i+1].(*yaml.Node))
	}
	return m
}

// scalarAt returns a string scalar placed, for messages, at at's position.
func scalarAt(v string, at *yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: at.Line, Column: at.Column}
}
