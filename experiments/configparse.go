package experiments

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/internal/suggest"
)

// parser reads a configuration document against the schema.
type parser struct {
	file, dir, assets string
	cfg               *Config
	keys              map[string]pos // positions of the keys (not values) by dotted path
	// schema is the schema (a field, not the package variable, which
	// refers to the parser's methods through its readers).
	schema []key
}

func newParser(file, assets string) *parser {
	return &parser{file: file, dir: filepath.Dir(file), assets: assets, cfg: &Config{File: file, pos: map[string]pos{}}, keys: map[string]pos{}, schema: schema}
}

// errf returns a ConfigError at node n.
func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	return &ConfigError{File: p.file, Line: n.Line, Column: n.Column, Key: key, Err: fmt.Errorf(format, args...)}
}

// mapping reads mapping node n, the value of key (its dotted path in the
// document, "" at the top level) whose schema path is sp, into dst: it
// refuses keys the schema does not have there (suggesting the closest
// one), keys given twice and keys of the other case study; then it reads
// the schema's keys in schema order, so that a key's reader and checks see
// the values of the keys before it, and applies the defaults of the keys
// not given.
func (p *parser) mapping(n *yaml.Node, key, sp string, dst any) error {
	where := key
	if where == "" {
		where = "top level"
	}
	if n.Kind != yaml.MappingNode {
		return p.errf(n, where, "want a mapping of keys, got %s", kindName(n))
	}
	entries := children(p.schema, sp)
	var known []string // the keys that apply to this case study, in schema order
	for _, e := range entries {
		if e.appliesTo(p.cfg.CaseStudy) && !slices.Contains(known, e.name()) {
			known = append(known, e.name())
		}
	}
	given := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return p.errf(k, where, "want a key, got %s", kindName(k))
		}
		full := join(key, k.Value)
		if !slices.Contains(known, k.Value) {
			for _, e := range entries {
				if e.name() == k.Value {
					return p.errf(k, full, "applies to case_study %s only; this is a %s experiment", e.study, p.cfg.CaseStudy)
				}
			}
			return p.errf(k, full, "unknown key%s (known keys: %s)", suggest.DidYouMean(k.Value, known), strings.Join(known, ", "))
		}
		if _, dup := given[k.Value]; dup {
			return p.errf(k, full, "key given twice")
		}
		given[k.Value] = v
		p.cfg.pos[full] = pos{v.Line, v.Column}
		p.keys[full] = pos{k.Line, k.Column}
	}
	for _, e := range entries {
		if !e.appliesTo(p.cfg.CaseStudy) {
			continue
		}
		full := join(key, e.name())
		v, ok := given[e.name()]
		if e.only != nil && !e.only(p.cfg) {
			if ok {
				return p.errf(v, full, "only when %s", e.onlyDoc)
			}
			continue
		}
		switch {
		case ok:
			if err := e.val.read(p, v, full, dst); err != nil {
				return err
			}
		case e.required:
			why := ""
			if e.only != nil {
				why = " (" + e.onlyDoc + ")"
			}
			if kp, ok := p.keys[key]; ok { // point at the enclosing key
				return &ConfigError{File: p.file, Line: kp.line, Column: kp.col, Key: full, Err: errors.New("missing required key" + why)}
			}
			return p.errf(n, full, "missing required key%s", why)
		case e.compute != nil:
			e.compute(p.cfg)
		case e.def != "":
			if err := e.val.read(p, e.defNode(), full, dst); err != nil {
				panic(fmt.Sprintf("experiments: schema key %s: default %q: %v", e.path, e.def, err))
			}
		}
		if ok && e.check != nil {
			if problem := e.check(p.cfg); problem != "" {
				return p.errf(v, full, "%s", problem)
			}
		}
	}
	return nil
}

// join appends a key to a dotted path.
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
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}
