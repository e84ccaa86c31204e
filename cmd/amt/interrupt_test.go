package main

import (
	"context"
	"crypto/sha256"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// folderHashes maps every file below dir to its sha256.
func folderHashes(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[strings.TrimPrefix(p, dir)] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// cancelOn is a writer for a command's stderr that cancels the command's
// context when the output shows word: an interrupt at a chosen stage.
type cancelOn struct {
	mu     sync.Mutex
	word   string
	cancel context.CancelFunc
	text   strings.Builder
}

func (c *cancelOn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.text.Write(p)
	if strings.Contains(c.text.String(), c.word) {
		c.cancel()
	}
	return len(p), nil
}

// An amt run of a changed configuration interrupted while its second
// agent runs (replay and online) changes nothing in the results folder:
// run.json, config.yaml, the sweep table and both agents' folders are the
// previous run's, which still plots; the same command run again then
// writes the new results whole.
func TestInterruptedRunKeepsResults(t *testing.T) {
	for _, mode := range []string{"replay", "online"} {
		t.Run(mode, func(t *testing.T) {
			cfg, out := smallConfig(t, mode, 3, "")
			if _, _, err := runCmd(t, "run", "-config", cfg); err != nil {
				t.Fatal(err)
			}
			before := folderHashes(t, out)
			doc, _ := os.ReadFile(cfg)
			changed := strings.Replace(string(doc), "seeds: 1-2", "seeds: 1-3", 1)
			if err := os.WriteFile(cfg, []byte(changed), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stderr := &cancelOn{word: "agent random", cancel: cancel}
			err := dispatch(ctx, &cliEnv{stdout: &strings.Builder{}, stderr: stderr}, []string{"run", "-config", cfg})
			if err == nil || !strings.Contains(err.Error(), "interrupted") {
				t.Fatalf("the interrupted run: %v\n%s", err, stderr.text.String())
			}
			after := folderHashes(t, out)
			for f, h := range before {
				if after[f] != h {
					t.Errorf("%s changed (or went) although the run was interrupted", f)
				}
			}
			for f := range after {
				if _, ok := before[f]; !ok {
					t.Errorf("%s is new although the run was interrupted", f)
				}
			}
			if _, _, err := runCmd(t, "plot", "-dir", out); err != nil {
				t.Errorf("the previous results no longer plot: %v", err)
			}
			if _, _, err := runCmd(t, "run", "-config", cfg); err != nil {
				t.Fatal(err)
			}
			for _, agent := range []string{"cover", "random"} {
				if _, err := os.Stat(filepath.Join(out, agent, "seed-3.jsonl")); err != nil {
					t.Errorf("the run again: %v", err)
				}
			}
			if _, _, err := runCmd(t, "plot", "-dir", out); err != nil {
				t.Errorf("the new results do not plot: %v", err)
			}
		})
	}
}
