package bandit

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the README's generated agent table")

const (
	readmeBegin = "<!-- agents: generated from bandit's agent table by `go test ./bandit -run TestREADMEAgents -update` -->\n"
	readmeEnd   = "<!-- end of agents -->\n"
)

// The README's list of agents is the agent table.
func TestREADMEAgents(t *testing.T) {
	path := filepath.Join("..", "README.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, readmeBegin)
	j := strings.Index(readme, readmeEnd)
	if i < 0 || j < i {
		t.Fatalf("%s has no generated agent table (%q … %q)", path, readmeBegin, readmeEnd)
	}
	got, want := readme[i+len(readmeBegin):j], AgentsMarkdown()
	if got == want {
		return
	}
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i+len(readmeBegin)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's agent table differs from the agent table; run go test ./bandit -run TestREADMEAgents -update\ngot:\n%s\nwant:\n%s", got, want)
}
