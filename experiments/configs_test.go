package experiments

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/internal/sharedpath"
)

// Every shipped configuration parses, checks out, and is named after its file.
func TestShippedConfigs(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	files, err := filepath.Glob(filepath.Join("configs", "*.yaml"))
	if err != nil || len(files) < 10 {
		t.Fatalf("configs: %v %v", files, err)
	}
	for _, f := range files {
		if IsSuite(f) {
			s, err := LoadSuite(f, assets)
			if err != nil {
				t.Errorf("%v", err)
			} else if s.Name != strings.TrimSuffix(filepath.Base(f), ".yaml") || s.Output != filepath.Join("results", s.Name) {
				t.Errorf("%s: name %q, output %q", f, s.Name, s.Output)
			}
			continue
		}
		c, err := LoadConfig(f, assets)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if c.Name != strings.TrimSuffix(filepath.Base(f), ".yaml") {
			t.Errorf("%s: name %q, want the file's name", f, c.Name)
		}
		if c.Output != filepath.Join("results", c.Name) {
			t.Errorf("%s: output %q", f, c.Output)
		}
	}
}

// Shipped configs also pass Prepare (models load and match input sizes);
// it hashes the data files, so it runs only without -short.
func TestShippedConfigsPrepare(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every model and hashes the 30 MB data file")
	}
	assets := sharedpath.ForTest(t, "assets")
	files, _ := filepath.Glob(filepath.Join("configs", "*.yaml"))
	for _, f := range files {
		if IsSuite(f) {
			continue // its SUTs are experiments, prepared by TestSuiteRun's kind
		}
		c, err := LoadConfig(f, assets)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Prepare(context.Background(), c); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// compare-agents.yaml runs every agent of package bandit with its defaults,
// spelling some options out "at their default values": they must stay so
// when a default changes, or the comparison silently runs other settings.
func TestCompareAgentsSpellsDefaults(t *testing.T) {
	c, err := LoadConfig(filepath.Join("configs", "compare-agents.yaml"), sharedpath.ForTest(t, "assets"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range c.Agents {
		seen[a.Name] = true
		def, err := bandit.Defaults(a.Name)
		if err != nil {
			t.Fatal(err)
		}
		got, err := bandit.Resolve(a.Name, a.Options)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := got.Canonical(a.Name), def.Canonical(a.Name); g != w {
			t.Errorf("compare-agents.yaml: agent %s: options %s, its defaults are %s", a.ID, g, w)
		}
	}
	for _, name := range bandit.Agents() {
		if !seen[name] {
			t.Errorf("compare-agents.yaml lacks agent %s", name)
		}
	}
}
