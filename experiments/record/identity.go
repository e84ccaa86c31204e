package record

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Identity names the run a result file belongs to. Every result file
// carries it (run.json, summary.json and timing.json as fields; sweep.csv
// and the progress logs through their sha256, recorded in run.json and
// summary.json), so a reader can refuse a folder whose files come from
// different runs: another configuration, another data limit, an
// interrupted re-run.
type Identity struct {
	// ConfigSHA256 is the hex sha256 of the configuration the run was made
	// with: the bytes of the snapshot config.yaml in the results folder
	// (for amt replay, which has no configuration, of its command line and
	// the sha256 of its input files).
	ConfigSHA256 string `json:"config_sha256"`
	// SweepKey names the exhaustive sweep the experiment's verdicts and
	// features come from: the names of its two cache tables
	// ("verdicts-<hex> features-<hex>", see package experiments), or for amt
	// replay the sha256 prefixes of its table and features files
	// ("file-<hex> file-<hex>").
	SweepKey string `json:"sweep_key"`
}

// IsZero reports whether id is unset (a file written before amt recorded
// identities).
func (id Identity) IsZero() bool { return id == Identity{} }

// String describes id briefly, for messages: "config 3f9a0b1c…, sweep verdicts-… features-…".
func (id Identity) String() string {
	if id.IsZero() {
		return "no run identity (written by an older amt)"
	}
	c := id.ConfigSHA256
	if len(c) > 12 {
		c = c[:12] + "…"
	}
	return fmt.Sprintf("config %s, sweep %s", c, id.SweepKey)
}

// SHA256 returns the hex sha256 of b.
func SHA256(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// FileSHA256 returns the hex sha256 of a file's content.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("record: %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// An AgentFolder is an agent's result folder being written. Its files go
// to a hidden temporary folder beside it (".<name>.tmp-…"), which replaces
// the folder when Commit is called: the old folder is renamed away, the
// new one into place, and the old one removed. So a folder holds the files
// of one run only (no progress log of a seed the new run did not have, no
// summary of an earlier run beside new logs), and an interrupted run
// leaves the previous folder as it was. Call Cleanup when Commit is not
// reached (it does nothing after Commit).
type AgentFolder struct {
	dir, tmp string
	id       Identity
	logs     map[string]string // file name -> sha256
	staged   bool              // summary.json and timing.json written
	done     bool              // committed or cleaned up
}

// CreateAgentFolder starts writing the agent folder dir for the run id. An
// existing dir must be an agent folder (nothing but summary.json,
// timing.json and progress logs), since Commit replaces it whole: any
// other file in it is an error naming the file, so a mistyped output
// folder is never deleted. It removes the leftovers of runs killed while
// committing (hidden ".<name>.tmp-*" and ".<name>.old-*" folders beside
// dir).
func CreateAgentFolder(dir string, id Identity) (*AgentFolder, error) {
	parent, name := filepath.Split(filepath.Clean(dir))
	if parent == "" {
		parent = "."
	}
	if err := checkAgentFolder(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	for _, pat := range []string{"." + name + ".tmp-*", "." + name + ".old-*"} {
		left, _ := filepath.Glob(filepath.Join(parent, pat))
		for _, p := range left {
			os.RemoveAll(p)
		}
	}
	tmp, err := os.MkdirTemp(parent, "."+name+".tmp-")
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("record: %w", err)
	}
	return &AgentFolder{dir: filepath.Clean(dir), tmp: tmp, id: id, logs: map[string]string{}}, nil
}

// IsAgentFile reports whether name is the name of a file of an agent's
// result folder: summary.json, timing.json, a progress log, a decision
// log, or the violations an amt check found (violations.jsonl, written
// into the folder after it is committed).
func IsAgentFile(name string) bool {
	_, log := ParseLogFile(name)
	return log || isDecisionsFile(name) || name == SummaryFile || name == TimingFile || name == ViolationsFile
}

// checkAgentFolder returns an error when dir exists and is not a folder
// holding only an agent's result files.
func checkAgentFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("record: agent folder: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !IsAgentFile(e.Name()) {
			return fmt.Errorf("record: %s holds %s, which is not an agent's result file (%s, %s, %s): the run replaces the folder whole, so give a new or empty folder, or one an earlier run wrote",
				dir, e.Name(), SummaryFile, TimingFile, LogGlob+", "+DecisionsGlob)
		}
	}
	return nil
}

// WriteLog writes seed's progress log (LogFile(seed)) and records its sha256
// for the summary.
func (f *AgentFolder) WriteLog(seed uint64, lines []LogLine) error {
	b, err := encodeLines(lines)
	if err != nil {
		return fmt.Errorf("record: encoding %s: %w", LogFile(seed), err)
	}
	return f.AddLog(seed, b)
}

// AddLog puts seed's progress log, already encoded (the bytes of a log
// file a shard wrote), into the folder and records its sha256.
func (f *AgentFolder) AddLog(seed uint64, b []byte) error {
	if err := WriteFileAtomic(filepath.Join(f.tmp, LogFile(seed)), b); err != nil {
		return err
	}
	f.logs[LogFile(seed)] = SHA256(b)
	return nil
}

// Stage writes summary.json and timing.json with the run's identity (and
// the summary with the sha256 of every progress log written) into the
// folder being written; Commit then puts it in place.
func (f *AgentFolder) Stage(s Summary, t Timing) error {
	if f.done {
		return errors.New("record: agent folder staged after its commit")
	}
	s.Identity, t.Identity = f.id, f.id
	s.Logs = f.logs
	if err := WriteTiming(filepath.Join(f.tmp, TimingFile), t); err != nil {
		return err
	}
	if err := WriteSummary(filepath.Join(f.tmp, SummaryFile), s); err != nil {
		return err
	}
	f.staged = true
	return nil
}

// Commit puts the staged folder (Stage) in place of the old one.
func (f *AgentFolder) Commit() error {
	if f.done {
		return errors.New("record: agent folder committed twice")
	}
	if !f.staged {
		return errors.New("record: agent folder committed before its summary was staged")
	}
	old := ""
	if _, err := os.Lstat(f.dir); err == nil {
		parent, name := filepath.Split(f.dir)
		old = filepath.Join(parent, "."+name+".old-"+strconv.FormatInt(time.Now().UnixNano(), 36))
		if err := os.Rename(f.dir, old); err != nil {
			return fmt.Errorf("record: replacing %s: %w", f.dir, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("record: %w", err)
	}
	if err := os.Rename(f.tmp, f.dir); err != nil {
		if old != "" {
			os.Rename(old, f.dir)
		}
		return fmt.Errorf("record: replacing %s: %w", f.dir, err)
	}
	f.done = true
	if old != "" {
		os.RemoveAll(old)
	}
	return nil
}

// Cleanup removes the temporary folder of an agent folder that was not
// committed.
func (f *AgentFolder) Cleanup() {
	if !f.done {
		os.RemoveAll(f.tmp)
		f.done = true
	}
}
