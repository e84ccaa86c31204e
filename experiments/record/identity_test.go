package record

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

// TestAgentFolder: a committed folder replaces the old one whole (no file
// of the earlier run stays), carries the identity and the logs' sha256; an
// uncommitted one leaves the old folder as it was, and leftovers of a
// killed commit are removed by the next run.
func TestAgentFolder(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "cover")
	id1 := Identity{ConfigSHA256: SHA256([]byte("a")), SweepKey: "k1"}
	write := func(id Identity, seeds ...uint64) {
		t.Helper()
		f, err := CreateAgentFolder(dir, id)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Cleanup()
		s := Summary{Agent: "cover", Scenario: "s", Runs: []Run{}}
		for _, seed := range seeds {
			if err := f.WriteLog(seed, []LogLine{{Agent: "cover", Seed: seed, Iteration: 1}}); err != nil {
				t.Fatal(err)
			}
			s.Runs = append(s.Runs, Run{Seed: seed})
		}
		if err := f.Commit(); err == nil {
			t.Fatal("a commit before the summary is staged: no error")
		}
		if err := f.Stage(s, Timing{Agent: "cover"}); err != nil {
			t.Fatal(err)
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
	}
	write(id1, 1, 2)
	if got := listDir(t, dir); !reflect.DeepEqual(got, []string{"seed-1.jsonl", "seed-2.jsonl", "summary.json", "timing.json"}) {
		t.Fatalf("files %v", got)
	}
	// Seed 1 alone: seed-2.jsonl goes.
	write(id1, 1)
	if got := listDir(t, dir); !reflect.DeepEqual(got, []string{"seed-1.jsonl", "summary.json", "timing.json"}) {
		t.Fatalf("after a run of seed 1: files %v", got)
	}
	s, err := ReadSummary(filepath.Join(dir, SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(filepath.Join(dir, "seed-1.jsonl"))
	if s.Identity != id1 || len(s.Logs) != 1 || s.Logs["seed-1.jsonl"] != SHA256(log) {
		t.Errorf("summary identity %+v, logs %v", s.Identity, s.Logs)
	}
	tm, err := ReadTiming(filepath.Join(dir, TimingFile))
	if err != nil || tm.Identity != id1 {
		t.Errorf("timing identity %+v, %v", tm.Identity, err)
	}
	// An interrupted run (no Commit) leaves the folder as it was and no
	// temporary folder.
	f, err := CreateAgentFolder(dir, Identity{ConfigSHA256: "b", SweepKey: "k2"})
	if err != nil {
		t.Fatal(err)
	}
	f.WriteLog(7, []LogLine{{Seed: 7}})
	f.Cleanup()
	if got := listDir(t, dir); !reflect.DeepEqual(got, []string{"seed-1.jsonl", "summary.json", "timing.json"}) {
		t.Errorf("after an interrupted run: files %v", got)
	}
	if got := listDir(t, root); !reflect.DeepEqual(got, []string{"cover"}) {
		t.Errorf("after an interrupted run: %v beside the folder", got)
	}
	// Leftovers of a process killed in Commit are removed.
	os.Mkdir(filepath.Join(root, ".cover.tmp-123"), 0o755)
	os.Mkdir(filepath.Join(root, ".cover.old-456"), 0o755)
	write(id1, 3)
	if got := listDir(t, root); !reflect.DeepEqual(got, []string{"cover"}) {
		t.Errorf("leftovers not removed: %v", got)
	}
}

// TestAgentFolderRefusesOtherFolders: a folder holding anything but an
// agent's result files is not replaced (a mistyped -out must not delete
// it); the error names the file.
func TestAgentFolderRefusesOtherFolders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "seed-1.jsonl"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	_, err := CreateAgentFolder(dir, Identity{ConfigSHA256: "a", SweepKey: "k"})
	if err == nil || !strings.Contains(err.Error(), dir+" holds notes.txt, which is not an agent's result file") {
		t.Fatalf("error %v", err)
	}
	if got := listDir(t, dir); !reflect.DeepEqual(got, []string{"notes.txt", "seed-1.jsonl"}) {
		t.Errorf("files %v", got)
	}
	if got := listDir(t, filepath.Dir(dir)); len(got) != 1 {
		t.Errorf("beside the folder: %v", got)
	}
	os.Remove(filepath.Join(dir, "notes.txt"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	if _, err := CreateAgentFolder(dir, Identity{}); err == nil || !strings.Contains(err.Error(), "holds sub,") {
		t.Errorf("sub-folder: %v", err)
	}
}
