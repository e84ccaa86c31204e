package experiments

import (
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

// A value is how a schema key's YAML value is read and where it goes.
type value struct {
	// want says what a valid value is, for the reference ("an integer in
	// [0, 1024]").
	want string
	// read parses n, the value of key (a dotted path, for errors), and
	// stores it into dst: the *Config, or the list item being read.
	read func(p *parser, n *yaml.Node, key string, dst any) error
	// fields returns pointers to the fields of dst that read sets (for the
	// schema's tests); nil for a section, whose keys set the fields.
	fields func(dst any) []any
}

// A reader reads one kind of YAML value as a T.
type reader[T any] struct {
	want  string
	parse func(p *parser, n *yaml.Node, key string) (T, error)
}

// bind makes the value of a key that r reads into the field of D that f
// returns.
func bind[D, T any](r reader[T], f func(*D) *T) value {
	return value{want: r.want,
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			v, err := r.parse(p, n, key)
			if err != nil {
				return err
			}
			*f(dst.(*D)) = v
			return nil
		},
		fields: func(dst any) []any { return []any{f(dst.(*D))} },
	}
}

// section is the value of a key holding a mapping of keys of its own; they
// are read into the same destination.
func section(want string) value {
	return value{want: want,
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			return p.mapping(n, key, schemaPath(key), dst)
		}}
}

// schemaPath returns the schema path of a document key: list indices
// become "[]" ("agents[1].id" → "agents[].id").
func schemaPath(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		b.WriteByte(key[i])
		if key[i] == '[' {
			for i+1 < len(key) && key[i+1] != ']' {
				i++
			}
		}
	}
	return b.String()
}

func (p *parser) scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, key, "want a single value, got %s", kindName(n))
	}
	return n.Value, nil
}

// text reads any single value, the empty string included.
func text() reader[string] {
	return reader[string]{want: "text", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		return p.scalar(n, key)
	}}
}

// nonEmpty reads a non-empty single value.
func nonEmpty(want string) reader[string] {
	return reader[string]{want: want, parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err == nil && s == "" {
			err = p.errf(n, key, "empty value; want %s", want)
		}
		return s, err
	}}
}

// folderPath reads the path of a folder amt reads or writes: not empty,
// without a NUL byte (which no file system allows: the value would pass
// here and fail late, at the first file written), and not the path of an
// existing file that is not a folder (which would fail late with an error
// about a file inside it). A folder that does not exist yet is fine.
func folderPath() reader[string] {
	return reader[string]{want: "a folder path", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := nonEmpty("a folder path").parse(p, n, key)
		if err != nil {
			return "", err
		}
		if strings.ContainsRune(s, 0) {
			return "", p.errf(n, key, "%q holds a NUL byte; want a folder path", s)
		}
		if fi, err := os.Stat(s); err == nil && !fi.IsDir() {
			return "", p.errf(n, key, "%s exists and is not a folder; want a folder path", s)
		}
		return s, nil
	}}
}

// folderName reads a name that names a results folder: no slashes, no
// spaces.
func folderName(what string) reader[string] {
	return reader[string]{want: "a name without slashes or spaces", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if s == "" || strings.ContainsAny(s, "/\\ \t") {
			return "", p.errf(n, key, "%q must not be empty or contain slashes or spaces (it names %s)", s, what)
		}
		if err := record.CheckName(s); err != nil {
			return "", p.errf(n, key, "%v (it names %s)", err, what)
		}
		return s, nil
	}}
}

// oneOf reads one of the given words (a function, for lists that come
// from a registry).
func oneOf(words func() []string) reader[string] {
	return reader[string]{want: "one of " + strings.Join(words(), ", "), parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if w := words(); !slices.Contains(w, s) {
			return "", p.errf(n, key, "%q is not one of %s%s", s, strings.Join(w, ", "), didYouMean(s, w))
		}
		return s, nil
	}}
}

// words returns a function listing ws.
func words(ws ...string) func() []string { return func() []string { return ws } }

// intIn reads an integer in [lo, hi].
func intIn(lo, hi int) reader[int] {
	want := fmt.Sprintf("an integer in [%d, %d]", lo, hi)
	return reader[int]{want: want, parse: func(p *parser, n *yaml.Node, key string) (int, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return 0, err
		}
		v, err := strconv.Atoi(s)
		if err != nil || v < lo || v > hi {
			return 0, p.errf(n, key, "%q is not %s", s, want)
		}
		return v, nil
	}}
}

// floatIn reads a finite number in [lo, hi].
func floatIn(lo, hi float64) reader[float64] {
	want := fmt.Sprintf("a number in [%g, %g]", lo, hi)
	return reader[float64]{want: want, parse: func(p *parser, n *yaml.Node, key string) (float64, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || v < lo || v > hi {
			return 0, p.errf(n, key, "%q is not %s", s, want)
		}
		return v, nil
	}}
}

// boolean reads true or false.
func boolean() reader[bool] {
	return reader[bool]{want: "true or false", parse: func(p *parser, n *yaml.Node, key string) (bool, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return false, err
		}
		switch s {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		return false, p.errf(n, key, "%q is not true or false", s)
	}}
}

// rgbTriple reads three finite numbers, one per channel (positive ones
// with positive).
func rgbTriple(positive bool) reader[[3]float64] {
	each := "a finite number"
	if positive {
		each = "a positive number"
	}
	want := fmt.Sprintf("a list of 3 numbers (R, G, B), or of 1 (a grey model's channel, or the same for all three), each %s", each)
	return reader[[3]float64]{want: want, parse: func(p *parser, n *yaml.Node, key string) ([3]float64, error) {
		var out [3]float64
		if n.Kind != yaml.SequenceNode || (len(n.Content) != 3 && len(n.Content) != 1) {
			return out, p.errf(n, key, "want %s, got %s", want, kindName(n))
		}
		for i, c := range n.Content {
			v, err := strconv.ParseFloat(c.Value, 64)
			if c.Kind != yaml.ScalarNode || err != nil || math.IsNaN(v) || math.IsInf(v, 0) || (positive && v <= 0) {
				return out, p.errf(c, key, "%q is not %s", c.Value, each)
			}
			out[i] = v
		}
		if len(n.Content) == 1 {
			out[1], out[2] = out[0], out[0]
		}
		return out, nil
	}}
}

// maxInputSide bounds a model's input side.
const maxInputSide = 1 << 14

// inputSize reads an input size, one integer (a square) or [width,
// height], into two int fields.
func inputSize(f func(*Config) (w, h *int)) value {
	want := fmt.Sprintf("an integer in [1, %d] (a square) or [width, height]", maxInputSide)
	side := func(n *yaml.Node) (int, bool) {
		v, err := strconv.Atoi(n.Value)
		return v, n.Kind == yaml.ScalarNode && err == nil && v > 0 && v <= maxInputSide
	}
	return value{want: want,
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			bad := p.errf(n, key, "want a positive integer or [width, height], got %s", kindName(n))
			var w, h int
			switch {
			case n.Kind == yaml.ScalarNode:
				v, ok := side(n)
				if !ok {
					return bad
				}
				w, h = v, v
			case n.Kind == yaml.SequenceNode && len(n.Content) == 2:
				var ok1, ok2 bool
				w, ok1 = side(n.Content[0])
				h, ok2 = side(n.Content[1])
				if !ok1 || !ok2 {
					return bad
				}
			default:
				return bad
			}
			pw, ph := f(dst.(*Config))
			*pw, *ph = w, h
			return nil
		},
		fields: func(dst any) []any { w, h := f(dst.(*Config)); return []any{w, h} },
	}
}

// filePath reads the path of an existing file (folder with dir, or when
// dir returns true), looked up beside the configuration file, then in the
// assets folder; the value is the resolved path.
func filePath(dir func(c *Config) bool) reader[string] {
	return reader[string]{want: "a path, relative to the config file or the assets folder", parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if s == "" {
			return "", p.errf(n, key, "empty path")
		}
		isDir := dir != nil && dir(p.cfg)
		var tried []string
		check := func(c string) bool {
			tried = append(tried, c)
			st, err := os.Stat(c)
			return err == nil && st.IsDir() == isDir
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
		if isDir {
			what = "folder"
		}
		return "", p.errf(n, key, "%s %q not found (looked at %s)", what, s, strings.Join(tried, ", "))
	}}
}

// seedList reads seeds: a specification of ParseSeeds, or a list of
// seeds.
func seedList() reader[[]uint64] {
	return reader[[]uint64]{want: fmt.Sprintf("a range such as 1-10, a seed, a comma list of both, or a list of seeds (at most %d)", maxSeeds),
		parse: func(p *parser, n *yaml.Node, key string) ([]uint64, error) {
			switch n.Kind {
			case yaml.ScalarNode:
				s, err := ParseSeeds(n.Value)
				if err != nil {
					return nil, p.errf(n, key, "%v", err)
				}
				return s, nil
			case yaml.SequenceNode:
				if len(n.Content) > maxSeeds {
					return nil, p.errf(n, key, "%d seeds, more than the limit of %d", len(n.Content), maxSeeds)
				}
				seeds := make([]uint64, 0, len(n.Content))
				seen := make(map[uint64]bool, len(n.Content))
				for _, e := range n.Content {
					v, err := strconv.ParseUint(e.Value, 10, 64)
					if e.Kind != yaml.ScalarNode || err != nil {
						return nil, p.errf(e, key, "%q is not a non-negative integer", e.Value)
					}
					if seen[v] {
						return nil, p.errf(e, key, "seed %d given twice", v)
					}
					seen[v] = true
					seeds = append(seeds, v)
				}
				if len(seeds) > 0 {
					return seeds, nil
				}
			}
			return nil, p.errf(n, key, "want a list of seeds or a range such as 1-10")
		}}
}

// contextKinds reads features.kind: one kind or a list of kinds, at most
// one of model, phash and none (none alone), then optionally sut.
func contextKinds() reader[[]string] {
	kinds := []string{"model", "phash", "none", featuresSut}
	return reader[[]string]{want: "one of " + strings.Join(kinds, ", ") + ", or a list of one of model, phash and sut: [model, sut]",
		parse: func(p *parser, n *yaml.Node, key string) ([]string, error) {
			items := []*yaml.Node{n}
			if n.Kind == yaml.SequenceNode {
				items = n.Content
			}
			if len(items) == 0 {
				return nil, p.errf(n, key, "want at least one kind")
			}
			var out []string
			for i, e := range items {
				s, err := p.scalar(e, key)
				if err != nil {
					return nil, err
				}
				if !slices.Contains(kinds, s) {
					return nil, p.errf(e, key, "%q is not one of %s%s", s, strings.Join(kinds, ", "), didYouMean(s, kinds))
				}
				if slices.Contains(out, s) {
					return nil, p.errf(e, key, "%s given twice", s)
				}
				if len(out) > 0 && out[len(out)-1] == featuresSut {
					return nil, p.errf(items[i-1], key, "sut must come last (the grey-box block ends the context)")
				}
				if len(out) > 0 && s != featuresSut {
					return nil, p.errf(e, key, "%s after %s: the context has one of model, phash and none, then optionally sut", s, out[len(out)-1])
				}
				if s == "none" && len(items) > 1 {
					return nil, p.errf(e, key, "none is a context of its own (a constant); it cannot be combined")
				}
				out = append(out, s)
			}
			return out, nil
		}}
}

// objective reads the objective key: paper keeps the action set's rewards,
// fault replaces them with scenario.Fault (action_set is read before).
func objective() value {
	r := oneOf(words("paper", "fault"))
	return value{want: r.want,
		read: func(p *parser, n *yaml.Node, key string, dst any) error {
			v, err := r.parse(p, n, key)
			if err != nil {
				return err
			}
			c := dst.(*Config)
			c.Objective = v
			if v == "fault" {
				c.Scenario.Objective = scenario.Fault
			}
			return nil
		},
		fields: func(dst any) []any { c := dst.(*Config); return []any{&c.Objective, &c.Scenario} },
	}
}

// scenarioSpec is a user-defined action set as read, before mr checks it.
type scenarioSpec struct {
	Name, Reward string
	Arms         []scenario.Arm
}

// actionSet reads a built-in scenario's name or a user-defined scenario
// (the keys action_set.*).
func actionSet() reader[scenario.Scenario] {
	return reader[scenario.Scenario]{want: "a built-in scenario (" + strings.Join(mr.BuiltinNames(), ", ") + ") or a mapping of name, reward and arms",
		parse: func(p *parser, n *yaml.Node, key string) (scenario.Scenario, error) {
			if n.Kind == yaml.ScalarNode {
				s, err := mr.Builtin(n.Value)
				if err != nil {
					return s, p.errf(n, key, "%v%s", err, didYouMean(n.Value, mr.BuiltinNames()))
				}
				return s, nil
			}
			var spec scenarioSpec
			if err := p.mapping(n, key, key, &spec); err != nil {
				return scenario.Scenario{}, err
			}
			obj, err := scenario.ObjectiveByName(spec.Reward)
			if err != nil {
				return scenario.Scenario{}, p.errf(n, key+".reward", "%v", err)
			}
			s, err := mr.NewScenario(spec.Name, obj, spec.Arms)
			if err != nil {
				return s, p.errf(n, key, "%v", err)
			}
			return s, nil
		}}
}

// arms reads the arms of a user-defined scenario (action_set.arms[].*).
func arms() reader[[]scenario.Arm] {
	return reader[[]scenario.Arm]{want: "a non-empty list of arms (mappings of mr, params, name)",
		parse: func(p *parser, n *yaml.Node, key string) ([]scenario.Arm, error) {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return nil, p.errf(n, key, "want a non-empty list of arms, got %s", kindName(n))
			}
			out := make([]scenario.Arm, len(n.Content))
			for i, a := range n.Content {
				item := fmt.Sprintf("%s[%d]", key, i)
				p.cfg.pos[item] = pos{a.Line, a.Column}
				if err := p.mapping(a, item, schemaPath(item), &out[i]); err != nil {
					return nil, err
				}
			}
			return out, nil
		}}
}

// grid reads a parameter grid: START:STOP:STEP (0 left out), a comma list,
// or a YAML list of values (scenario.ParseGrid).
func grid() reader[[]float64] {
	return reader[[]float64]{want: "a grid START:STOP:STEP (0 left out), one value, or a list of values, in the relation's unit",
		parse: func(p *parser, n *yaml.Node, key string) ([]float64, error) {
			spec := n.Value
			switch n.Kind {
			case yaml.ScalarNode:
			case yaml.SequenceNode:
				var parts []string
				for _, e := range n.Content {
					if e.Kind != yaml.ScalarNode {
						return nil, p.errf(e, key, "want a number, got %s", kindName(e))
					}
					parts = append(parts, e.Value)
				}
				spec = strings.Join(parts, ",")
			default:
				return nil, p.errf(n, key, "want a grid or a list of values, got %s", kindName(n))
			}
			v, err := scenario.ParseGrid(spec)
			if err != nil {
				return nil, p.errf(n, key, "%v", err)
			}
			return v, nil
		}}
}

// agentKeys are the keys of an agent given as a mapping.
var agentKeys = []string{"name", "id", "options"}

// agentList reads the agents (agents[].*): each a name ("- cover"), a
// name with options ("- cover: {hidden: 0}") or a mapping of name, id and
// options. It checks the names and options against package bandit's agent
// table and that the ids (default: the name) are distinct.
func agentList() reader[[]AgentSpec] {
	return reader[[]AgentSpec]{want: "a non-empty list of agents: NAME, NAME: {OPTION: VALUE, …}, or {name, id, options}",
		parse: func(p *parser, n *yaml.Node, key string) ([]AgentSpec, error) {
			if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
				return nil, p.errf(n, key, "want a non-empty list of agents, got %s", kindName(n))
			}
			var out []AgentSpec
			ids := map[string]bool{}
			for i, a := range n.Content {
				item := fmt.Sprintf("%s[%d]", key, i)
				p.cfg.pos[item] = pos{a.Line, a.Column}
				var spec AgentSpec
				switch {
				case a.Kind == yaml.ScalarNode:
					if err := p.agentName(a, item+".name", &spec.Name); err != nil {
						return nil, err
					}
				case isAgentShorthand(a):
					// NAME: {OPTION: VALUE, …}, the options of one agent.
					k, v := a.Content[0], a.Content[1]
					if err := p.agentName(k, item+".name", &spec.Name); err != nil {
						return nil, err
					}
					p.keys[item+".options"] = pos{k.Line, k.Column}
					if v.Kind != yaml.ScalarNode || v.Tag != "!!null" {
						opts, err := agentOptions().parse(p, v, item+".options")
						if err != nil {
							return nil, err
						}
						spec.Options = opts
					}
				default:
					if err := p.mapping(a, item, schemaPath(item), &spec); err != nil {
						return nil, err
					}
				}
				if err := p.checkAgentOptions(item, spec); err != nil {
					return nil, err
				}
				if spec.ID == "" {
					spec.ID = spec.Name
				}
				if ids[spec.ID] {
					return nil, p.errf(a, item, "agent id %q used twice; give one of them an id (- {name: %s, id: …, options: …})", spec.ID, spec.Name)
				}
				ids[spec.ID] = true
				out = append(out, spec)
			}
			return out, nil
		}}
}

// isAgentShorthand reports whether an agents item is NAME: OPTIONS: a
// mapping of one key that is not a key of the long form and holds options
// (a mapping or nothing), or names an agent.
func isAgentShorthand(a *yaml.Node) bool {
	if a.Kind != yaml.MappingNode || len(a.Content) != 2 || slices.Contains(agentKeys, a.Content[0].Value) {
		return false
	}
	v := a.Content[1]
	return v.Kind == yaml.MappingNode || (v.Kind == yaml.ScalarNode && v.Tag == "!!null") || slices.Contains(bandit.Agents(), a.Content[0].Value)
}

// agentName reads an agent's name and checks it against the agent table.
func (p *parser) agentName(n *yaml.Node, key string, dst *string) error {
	name, err := agentNameReader().parse(p, n, key)
	if err != nil {
		return err
	}
	p.cfg.pos[key] = pos{n.Line, n.Column}
	*dst = name
	return nil
}

func agentNameReader() reader[string] {
	return reader[string]{want: "an agent of package bandit: " + strings.Join(bandit.Agents(), ", "),
		parse: func(p *parser, n *yaml.Node, key string) (string, error) {
			s, err := p.scalar(n, key)
			if err != nil {
				return "", err
			}
			if !slices.Contains(bandit.Agents(), s) {
				return "", p.errf(n, key, "unknown agent %q (known: %s)%s", s, strings.Join(bandit.Agents(), ", "), didYouMean(s, bandit.Agents()))
			}
			return s, nil
		}}
}

// agentOptions reads a mapping of agent options (checked against the
// agent later, when its name is known).
func agentOptions() reader[bandit.Options] {
	return reader[bandit.Options]{want: "a mapping of option: value (the agent's options below)",
		parse: func(p *parser, n *yaml.Node, key string) (bandit.Options, error) {
			if n.Kind != yaml.MappingNode {
				return nil, p.errf(n, key, "want a mapping of option: value, got %s", kindName(n))
			}
			opts := bandit.Options{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				k, v := n.Content[j], n.Content[j+1]
				full := key + "." + k.Value
				if k.Kind != yaml.ScalarNode {
					return nil, p.errf(k, key, "want an option name, got %s", kindName(k))
				}
				if v.Kind != yaml.ScalarNode {
					return nil, p.errf(v, full, "want a single value, got %s", kindName(v))
				}
				if _, dup := opts[k.Value]; dup {
					return nil, p.errf(k, full, "option given twice")
				}
				opts[k.Value] = v.Value
				p.keys[full] = pos{k.Line, k.Column}
				p.cfg.pos[full] = pos{v.Line, v.Column}
			}
			return opts, nil
		}}
}

// checkAgentOptions checks an agent's options against its entry in the
// agent table, pointing at the offending option.
func (p *parser) checkAgentOptions(item string, spec AgentSpec) error {
	keys := bandit.Keys(spec.Name)
	for _, k := range slices.Sorted(maps.Keys(spec.Options)) {
		full := item + ".options." + k
		if !slices.Contains(keys, k) {
			kp := p.keys[full]
			return &ConfigError{File: p.file, Line: kp.line, Column: kp.col, Key: full,
				Err: fmt.Errorf("agent %s has no option %q%s (its options: %s)", spec.Name, k, didYouMean(k, keys), strings.Join(keys, ", "))}
		}
		if _, err := bandit.Resolve(spec.Name, bandit.Options{k: spec.Options[k]}); err != nil {
			return p.cfg.errAt(full, "%v", err)
		}
	}
	return nil
}

// uintValue reads a non-negative integer (a seed).
func uintValue() reader[uint64] {
	return reader[uint64]{want: "a non-negative integer", parse: func(p *parser, n *yaml.Node, key string) (uint64, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, p.errf(n, key, "%q is not a non-negative integer", s)
		}
		return v, nil
	}}
}

// maxDuration bounds a time budget.
const maxDuration = 7 * 24 * time.Hour

// duration reads a positive Go duration ("90s", "1m30s").
func duration() reader[time.Duration] {
	want := "a duration such as 90s or 1m30s (at most 168h)"
	return reader[time.Duration]{want: want, parse: func(p *parser, n *yaml.Node, key string) (time.Duration, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return 0, err
		}
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > maxDuration {
			return 0, p.errf(n, key, "%q is not %s", s, want)
		}
		return d, nil
	}}
}

// optRate reads a rate in [0, 1] into an optional value.
func optRate() reader[*float64] {
	r := floatIn(0, 1)
	return reader[*float64]{want: r.want, parse: func(p *parser, n *yaml.Node, key string) (*float64, error) {
		v, err := r.parse(p, n, key)
		if err != nil {
			return nil, err
		}
		return &v, nil
	}}
}

// openUnit reads a number in (0, 1).
func openUnit() reader[float64] {
	want := "a number in (0, 1)"
	return reader[float64]{want: want, parse: func(p *parser, n *yaml.Node, key string) (float64, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return 0, err
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0 && v < 1) {
			return 0, p.errf(n, key, "%q is not %s", s, want)
		}
		return v, nil
	}}
}

// mrRates reads a mapping of the action set's relations to rates in [0, 1].
func mrRates() reader[map[string]float64] {
	rate := floatIn(0, 1)
	return reader[map[string]float64]{want: "a mapping of relation: rate in [0, 1], the relations of the action set",
		parse: func(p *parser, n *yaml.Node, key string) (map[string]float64, error) {
			if n.Kind != yaml.MappingNode {
				return nil, p.errf(n, key, "want a mapping of relation: rate, got %s", kindName(n))
			}
			mrs := p.cfg.Scenario.Actions()
			out := map[string]float64{}
			for j := 0; j+1 < len(n.Content); j += 2 {
				k, v := n.Content[j], n.Content[j+1]
				if k.Kind != yaml.ScalarNode {
					return nil, p.errf(k, key, "want a relation, got %s", kindName(k))
				}
				full := key + "." + k.Value
				if !slices.Contains(mrs, k.Value) {
					return nil, p.errf(k, full, "%q is not a relation of the action set (%s)%s", k.Value, strings.Join(mrs, ", "), didYouMean(k.Value, mrs))
				}
				if _, dup := out[k.Value]; dup {
					return nil, p.errf(k, full, "relation given twice")
				}
				r, err := rate.parse(p, v, full)
				if err != nil {
					return nil, err
				}
				out[k.Value] = r
				p.cfg.pos[full] = pos{v.Line, v.Column}
			}
			return out, nil
		}}
}
