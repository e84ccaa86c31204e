package experiments

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"

	"github.com/amt-dev/amt/experiments/record"
)

// The sweep cache. Each cached table is a folder
// <cache>/<namespace>-<first 20 hex digits of the sha256 of its key's
// JSON>, holding
//
//   - meta.json: what the table is (cacheMeta: its kind, its key, the
//     number of rows, the follow-ups or the feature dimension); a folder
//     whose meta.json differs is refused, never overwritten;
//   - checkpoint files part-<stamp>-<worker>.jsonl: one JSON line per
//     finished row, appended by one writer each (stamp names the sweep
//     process, worker its goroutine) with a single write per line, so a
//     kill leaves at most a torn last line, which readers skip; a shard's
//     are part-<K>of<N>-<stamp>-<worker>.jsonl;
//   - shard files shard-<K>of<N>.jsonl: the finished rows of shard K of N
//     (see Shard), written atomically when the shard is done; a header
//     line (shardHeader) records the table's meta.json, the split and the
//     bound of the rows it holds, so a shard file of other settings or of
//     another split is refused;
//   - table.jsonl: the consolidated table, one line per row in row order,
//     written atomically once every row is done; the checkpoint and shard
//     files are removed then.
//
// A reader takes table.jsonl first, then shard files, then checkpoint
// files, in name order, and keeps the first line of each row. Which files
// it reads depends on who reads (readMode): a single-process sweep reads
// everything; a shard reads only files no live process writes (the table,
// its own shard file, the checkpoints of its own earlier runs and of
// single-process sweeps), so shards on different machines never read a
// file being written; a merge reads only the table and the shard files.
// Every file has one writer, so shards are safe on NFS and shared volumes.
//
// The namespaces are "verdicts" (the case study's judgements, one line per
// image), "features" (the context features) and "runs" (agent runs over
// seeds, one line per seed, made only by sharded runs): they have separate
// keys, so a feature ablation reuses the verdicts and the other way round.

// cacheMeta is a cached table's meta.json.
type cacheMeta struct {
	Kind     string          `json:"kind"`
	Key      json.RawMessage `json:"key"`
	Images   int             `json:"images"`
	Variants []string        `json:"variants,omitempty"`
	Dim      int             `json:"dim,omitempty"`
	// Seeds is the number of rows of a "runs" table (Images is 0 there).
	Seeds int `json:"seeds,omitempty"`
}

// rows is the number of rows of the table.
func (m cacheMeta) rows() int { return m.Images + m.Seeds }

// cacheDir returns the folder of namespace's table for key in the cache
// root.
func cacheDir(root, namespace string, key any) (string, error) {
	b, err := json.Marshal(key)
	if err != nil {
		return "", fmt.Errorf("sweep: cache key: %w", err)
	}
	s := sha256.Sum256(b)
	return filepath.Join(root, namespace+"-"+hex.EncodeToString(s[:])[:20]), nil
}

// A cacheTable is one table of the sweep cache (see above).
type cacheTable struct {
	dir      string
	root, ns string // the cache root and namespace, to look for shards of other settings
	meta     []byte // meta.json's content
	rows     int
	what     string // "sweep" or "run", in errors
	unit     string // "images" or "seeds"
}

// openCache returns namespace's table for key in root: it creates the
// folder and its meta.json (m with the key filled in), or checks that an
// existing meta.json describes the same table. Shards of one sweep may
// open it at the same time: each writes the same meta.json atomically.
func openCache(root, namespace string, key any, m cacheMeta) (*cacheTable, error) {
	dir, err := cacheDir(root, namespace, key)
	if err != nil {
		return nil, err
	}
	if m.Key, err = json.Marshal(key); err != nil {
		return nil, fmt.Errorf("sweep: cache key: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	want, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	want = append(want, '\n')
	c := &cacheTable{dir: dir, root: root, ns: namespace, meta: want, rows: m.rows(), what: "sweep", unit: "images"}
	if m.Seeds > 0 {
		c.what, c.unit = "run", "seeds"
	}
	p := filepath.Join(dir, "meta.json")
	got, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		if err := record.WriteFileAtomic(p, want); err != nil {
			return nil, err
		}
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("sweep: cache %s was made for other settings (its meta.json differs); remove the directory", dir)
	}
	return c, nil
}

// tableFile is the consolidated table's file.
func (c *cacheTable) tableFile() string { return filepath.Join(c.dir, "table.jsonl") }

// shardFile is shard sh's file.
func (c *cacheTable) shardFile(sh Shard) string {
	return filepath.Join(c.dir, "shard-"+sh.tag()+".jsonl")
}

var (
	shardName      = regexp.MustCompile(`^shard-([0-9]+)of([0-9]+)\.jsonl$`)
	checkpointName = regexp.MustCompile(`^part-(?:([0-9]+)of([0-9]+)-)?[0-9]+-[0-9]+\.jsonl$`)
)

// parseTag reads the K and N of a file name's "KofN".
func parseTag(k, n string) (Shard, bool) {
	sh, err := ParseShard(k + "/" + n)
	return sh, err == nil && sh.tag() == k+"of"+n
}

// cacheFiles are the files of a table, by kind, each in name order.
type cacheFiles struct {
	table  bool
	shards map[int][]Shard // by split: the shards that have a file
	// checkpoints maps a checkpoint file to its shard (the zero Shard for a
	// single-process sweep's).
	checkpoints []string
	cpShard     map[string]Shard
}

// list lists the table's files.
func (c *cacheTable) list() (cacheFiles, error) {
	fs := cacheFiles{shards: map[int][]Shard{}, cpShard: map[string]Shard{}}
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return fs, fmt.Errorf("sweep: %w", err)
	}
	for _, e := range ents { // in name order
		name := e.Name()
		switch {
		case name == "table.jsonl":
			fs.table = true
		case shardName.MatchString(name):
			m := shardName.FindStringSubmatch(name)
			sh, ok := parseTag(m[1], m[2])
			if !ok {
				return fs, fmt.Errorf("sweep: %s: not a shard K of N (0 ≤ K < N ≤ %d)", filepath.Join(c.dir, name), maxShards)
			}
			fs.shards[sh.Count] = append(fs.shards[sh.Count], sh)
		case checkpointName.MatchString(name):
			m := checkpointName.FindStringSubmatch(name)
			var sh Shard
			if m[1] != "" {
				var ok bool
				if sh, ok = parseTag(m[1], m[2]); !ok {
					return fs, fmt.Errorf("sweep: %s: not a shard K of N (0 ≤ K < N ≤ %d)", filepath.Join(c.dir, name), maxShards)
				}
			}
			fs.checkpoints = append(fs.checkpoints, name)
			fs.cpShard[name] = sh
		}
	}
	return fs, nil
}

// splits lists the splits that have shard files, ascending.
func (f cacheFiles) splits() []int {
	var out []int
	for n := range f.shards {
		out = append(out, n)
	}
	sort.Ints(out)
	return out
}

// A readMode says who reads a table, and so which of its files (see the
// layout above).
type readMode int

const (
	// readAll: a single-process sweep reads every file, shard files of
	// any split included.
	readAll readMode = iota
	// readShard: a shard reads the table, its own shard file, its own
	// checkpoints and those of single-process sweeps; it refuses shard
	// files of another split.
	readShard
	// readMerge: a merge reads the table and the shard files of one split.
	readMerge
)

// loaded is what load found.
type loaded struct {
	table bool
	// split is the shard count of the shard files read (0: none).
	split int
	// upto maps a shard (of split) with a file to the bound of its rows.
	upto map[int]int
}
