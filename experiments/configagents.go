package experiments

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/suggest"
)

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
	return listed("an agent of package bandit: "+strings.Join(bandit.Agents(), ", "), func(*parser) []string { return bandit.Agents() },
		func(s string, known []string) string {
			return fmt.Sprintf("unknown agent %q (known: %s)", s, strings.Join(known, ", "))
		})
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
				Err: fmt.Errorf("agent %s has no option %q%s (its options: %s)", spec.Name, k, suggest.DidYouMean(k, keys), strings.Join(keys, ", "))}
		}
		if _, err := bandit.Resolve(spec.Name, bandit.Options{k: spec.Options[k]}); err != nil {
			return p.cfg.errAt(full, "%v", err)
		}
	}
	return nil
}
