package experiments

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// An amt run whose results folder already holds its results — same
// configuration, inputs, seeds and amt build — runs nothing and leaves
// every file as it was; another build, an unknown build, or
// a changed configuration runs again.
func TestRunUpToDate(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	doc := fmt.Sprintf(`name: uptodate
case_study: classification
mode: online
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: 3}
sut: {model: models/cifar10_resnet20.onnx, input_size: 32}
features: {kind: phash}
action_set: basic
agents: [random, cover]
seeds: 1-2
output: %s
cache: %s
`, out, filepath.Join(dir, "cache"))
	run := func(doc, build string) string {
		t.Helper()
		cfg, err := parseConfig([]byte(doc), filepath.Join(dir, "c.yaml"), assets)
		if err != nil {
			t.Fatal(err)
		}
		e, err := Prepare(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		e.build = build
		var log strings.Builder
		if err := e.Run(context.Background(), &log, nil); err != nil {
			t.Fatal(err)
		}
		return log.String()
	}
	files := func() map[string]string {
		t.Helper()
		m := map[string]string{}
		filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				m[p] = string(b)
			}
			return err
		})
		return m
	}
	if log := run(doc, "exe-sha-1"); strings.Contains(log, "up to date") {
		t.Fatalf("the first run: %s", log)
	}
	before := files()
	if log := run(doc, "exe-sha-1"); !strings.Contains(log, "up to date") {
		t.Errorf("the same run again ran: %s", log)
	}
	after := files()
	if len(after) != len(before) {
		t.Errorf("%d files before, %d after", len(before), len(after))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed although the results were up to date", p)
		}
	}
	for _, tc := range []struct{ name, doc, build string }{
		{"another build", doc, "exe-sha-2"},
		{"another seed list", strings.Replace(doc, "seeds: 1-2", "seeds: 1-3", 1), "exe-sha-2"},
		{"an unknown build", strings.Replace(doc, "seeds: 1-2", "seeds: 1-3", 1), ""},
	} {
		if log := run(tc.doc, tc.build); strings.Contains(log, "up to date") {
			t.Errorf("%s: nothing ran: %s", tc.name, log)
		}
	}
}
