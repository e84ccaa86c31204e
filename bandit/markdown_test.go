package bandit

import (
	"strings"
	"testing"
)

// Every agent's row lists each of its options with the agent's effective
// default (the value Canonical writes for its defaults), and the option
// table lists every option.
func TestAgentsMarkdown(t *testing.T) {
	md := AgentsMarkdown()
	rows := map[string]string{}
	for _, line := range strings.Split(md, "\n") {
		if name, ok := strings.CutPrefix(line, "| `"); ok {
			if i := strings.Index(name, "`"); i > 0 {
				rows[name[:i]] = line
			}
		}
	}
	for _, a := range AgentTable() {
		row, ok := rows[a.Name]
		if !ok {
			t.Errorf("agent %s has no row", a.Name)
			continue
		}
		cfg, err := Defaults(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		effective := map[string]string{}
		for _, o := range a.Options {
			effective[o.Key] = o.Default
		}
		for _, kv := range strings.Split(cfg.Canonical(a.Name), ",") {
			if k, v, ok := strings.Cut(kv, "="); ok {
				effective[k] = v
			}
		}
		for _, k := range Keys(a.Name) {
			if want := "`" + k + "` (" + effective[k] + ")"; !strings.Contains(row, want) {
				t.Errorf("agent %s: row lacks %s:\n%s", a.Name, want, row)
			}
		}
	}
	for _, o := range allOptions {
		if _, ok := rows[o.Key]; !ok {
			t.Errorf("option %s has no row", o.Key)
		}
	}
}
