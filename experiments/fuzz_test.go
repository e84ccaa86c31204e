package experiments

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// FuzzConfig: no document makes the configuration parser panic; every
// error is one line, a *ConfigError naming the file; an accepted
// configuration has what a run needs.
func FuzzConfig(f *testing.F) {
	addSeeds(f, filepath.Join("configs", "*.yaml"), "", "---\n---\n", "name: x\n", "name: [a\n", "seeds: 18446744073709551615\n", "seeds: 1-1000000000000\n",
		"action_set: {name: a, arms: [{mr: rotation, params: -360:360:0.001}]}\n",
		"agents: [{cover: {hidden: 1e9}}]\n", "data: &a {path: *a}\n", "name: !!binary aGk=\n")
	name, assets := fuzzPaths(f, "fuzz.yaml")
	f.Fuzz(func(t *testing.T, doc []byte) {
		cfg, err := parseConfig(doc, name, assets)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.File != name || !strings.HasPrefix(err.Error(), name) {
				t.Fatalf("error %q (%T) is not a ConfigError naming the file", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if cfg.Name == "" || len(cfg.Agents) == 0 || len(cfg.Seeds) == 0 || cfg.Passes < 1 || cfg.Output == "" {
			t.Fatalf("accepted an incomplete configuration: %+v", cfg)
		}
		if err := cfg.Scenario.Validate(); err != nil {
			t.Fatalf("accepted a bad scenario: %v", err)
		}
	})
}

// FuzzSuite: no suite document makes the suite parser panic; every error
// is one line naming the file; an accepted suite has what a run needs.
func FuzzSuite(f *testing.F) {
	addSeeds(f, filepath.Join("configs", "suite*.yaml"), "", "suts: []\n", "name: s\nagents: [random]\nseeds: 1\nfeatures: {kind: model}\nsuts: [{name: a}]\n",
		"name: s\nagents: &a [random]\nseeds: 1\nfeatures: {kind: model}\nsuts: [{name: a, case_study: classification, data: *a, sut: *a}]\n",
		"name: s\nworkers: 99999999999999999999\n")
	name, assets := fuzzPaths(f, "suite.yaml")
	f.Fuzz(func(t *testing.T, doc []byte) {
		s, err := parseSuite(doc, name, assets)
		if err != nil {
			if !strings.HasPrefix(err.Error(), name) {
				t.Fatalf("error %q (%T) does not name the file", err, err)
			}
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("error is not one line: %q", err)
			}
			return
		}
		if s.Name == "" || len(s.SUTs) == 0 || len(s.Agents) == 0 || len(s.Seeds) == 0 {
			t.Fatalf("accepted an incomplete suite: %+v", s)
		}
	})
}

// addSeeds adds the files matching pattern and the documents docs to f's
// seed corpus.
func addSeeds(f *testing.F, pattern string, docs ...string) {
	files, _ := filepath.Glob(pattern)
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, doc := range docs {
		f.Add([]byte(doc))
	}
}

// fuzzPaths returns the path a fuzzed document claims to be read from (a
// file that does not exist, in a temporary folder) and the assets folder
// its relative paths resolve in: the shared assets when they are here,
// else an empty folder. Nothing is written either way.
func fuzzPaths(f *testing.F, file string) (name, assets string) {
	assets, err := sharedpath.Find("assets")
	if err != nil {
		assets = f.TempDir()
	}
	return filepath.Join(f.TempDir(), file), assets
}
