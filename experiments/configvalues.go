package experiments

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/amt-dev/amt/internal/suggest"
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

// listed reads one of the words known returns when the value is read (a
// list that may depend on what the configuration gave before); a word not
// on it is the error notListed says, with the closest word as a
// suggestion.
func listed(want string, known func(p *parser) []string, notListed func(s string, known []string) string) reader[string] {
	return reader[string]{want: want, parse: func(p *parser, n *yaml.Node, key string) (string, error) {
		s, err := p.scalar(n, key)
		if err != nil {
			return "", err
		}
		if k := known(p); !slices.Contains(k, s) {
			return "", p.errf(n, key, "%s%s", notListed(s, k), suggest.DidYouMean(s, k))
		}
		return s, nil
	}}
}

// oneOf reads one of the given words (a function, for lists that come
// from a registry).
func oneOf(words func() []string) reader[string] {
	return listed("one of "+strings.Join(words(), ", "), func(*parser) []string { return words() },
		func(s string, w []string) string { return fmt.Sprintf("%q is not one of %s", s, strings.Join(w, ", ")) })
}

// words returns a function listing ws.
func words(ws ...string) func() []string { return func() []string { return ws } }

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
