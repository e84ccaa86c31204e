package bandit

import (
	"testing"

	"github.com/amt-dev/amt/mr"
)

// Every table entry is complete: a doc line, options that exist, defaults
// only for options the agent takes, a constructor that works.
func TestAgentTable(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range AgentTable() {
		if a.Name == "" || a.Doc == "" || (a.new == nil) == (a.joint == nil) || seen[a.Name] {
			t.Errorf("agent %q: incomplete or repeated entry", a.Name)
		}
		seen[a.Name] = true
		for k := range a.Defaults {
			if a.option(k) == nil {
				t.Errorf("agent %s: default for option %q it does not take", a.Name, k)
			}
		}
		cfg, err := Defaults(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		// The canonical options resolve back to the same configuration.
		o, err := ParseOptions(cfg.Canonical(a.Name))
		if err != nil {
			t.Fatal(err)
		}
		if back, err := Resolve(a.Name, o); err != nil || back != cfg {
			t.Errorf("agent %s: canonical %q resolves to %+v, %v", a.Name, cfg.Canonical(a.Name), back, err)
		}
		if a.joint != nil {
			// No flat policy: it decides a whole scenario.
			if _, err := NewPolicy(a.Name, 3, 2, cfg, 1); err == nil {
				t.Errorf("agent %s: NewPolicy of an agent without flat policy: no error", a.Name)
			}
			if _, err := New(a.Name, mr.Hierarchical(), Layout{Dim: 2}, nil, 1); err != nil {
				t.Errorf("agent %s: New: %v", a.Name, err)
			}
			continue
		}
		if p, err := NewPolicy(a.Name, 3, 2, cfg, 1); err != nil || p.Arms() != 3 {
			t.Errorf("agent %s: NewPolicy: %v", a.Name, err)
		}
	}
	keys := map[string]bool{}
	for _, o := range allOptions {
		if keys[o.Key] || o.Doc == "" || o.Want == "" {
			t.Errorf("option %q: incomplete or declared twice", o.Key)
		}
		keys[o.Key] = true
		var c Config
		if err := o.set(&c, o.Default); err != nil || o.get(c) != o.Default {
			t.Errorf("option %s: default %q reads back as %q, %v", o.Key, o.Default, o.get(c), err)
		}
	}
}
