package experiments

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/scenario"
)

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
					return nil, p.errf(e, key, "%q is not one of %s%s", s, strings.Join(kinds, ", "), suggest.DidYouMean(s, kinds))
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
					return s, p.errf(n, key, "%v", err)
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
					return nil, p.errf(k, full, "%q is not a relation of the action set (%s)%s", k.Value, strings.Join(mrs, ", "), suggest.DidYouMean(k.Value, mrs))
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
