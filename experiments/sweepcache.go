package experiments

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

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

// maxCacheLine bounds one line of a cache file (a 512-d feature row is
// about 6 KB, a judgement of 59 follow-ups less than 2 KB).
const maxCacheLine = 1 << 28

// shardHeader is the first line of a shard file.
type shardHeader struct {
	Shard int `json:"shard"`
	Of    int `json:"of"`
	// Upto bounds the rows the file holds: every row i < Upto of the
	// shard (a limited sweep's shard holds fewer than the whole table's).
	Upto int `json:"upto"`
	// Meta is the table's meta.json (compact).
	Meta json.RawMessage `json:"meta"`
}

// load feeds every complete line of the files mode reads (table.jsonl,
// then shard files, then checkpoint files) to fn, which returns the line's
// row. The rows of a shard file must belong to its shard. A checkpoint's
// last line may be torn by a kill: a final line without a newline is
// skipped. It stops with ctx.Err() between files when ctx is cancelled.
func (c *cacheTable) load(ctx context.Context, mode readMode, sh Shard, fn func([]byte) (int, error)) (loaded, error) {
	ld := loaded{upto: map[int]int{}}
	fs, err := c.list()
	if err != nil {
		return ld, err
	}
	splits := fs.splits()
	switch {
	case mode == readShard && (len(splits) > 1 || len(splits) == 1 && splits[0] != sh.Count):
		for _, n := range splits {
			if n != sh.Count {
				return ld, fmt.Errorf("%s: %s holds shard files of a %d-way split (%s), but this is shard %s: finish that split, or run the %s without -shard to finish it in one process",
					c.what, c.dir, n, c.shardFileNames(fs.shards[n]), sh, c.what)
			}
		}
	case mode == readMerge && len(splits) > 1:
		var ds []string
		for _, n := range splits {
			ds = append(ds, fmt.Sprintf("a %d-way split (%s)", n, c.shardFileNames(fs.shards[n])))
		}
		return ld, fmt.Errorf("%s: %s holds shard files of %s: merge one split (remove the files of the other), or run the %s without -merge, which uses every cached row",
			c.what, c.dir, strings.Join(ds, " and "), c.what)
	}
	type file struct {
		name  string
		shard Shard // of a shard file
	}
	var files []file
	if fs.table {
		ld.table = true
		files = append(files, file{name: "table.jsonl"})
	}
	for _, n := range splits {
		for _, s := range fs.shards[n] {
			if mode == readShard && s != sh {
				continue // another shard's rows
			}
			files = append(files, file{name: "shard-" + s.tag() + ".jsonl", shard: s})
		}
	}
	if mode != readMerge {
		for _, name := range fs.checkpoints {
			cs := fs.cpShard[name]
			if mode == readShard && cs.sharded() && cs != sh {
				continue // another shard's: it may be writing it right now
			}
			files = append(files, file{name: name})
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return ld, err
		}
		path := filepath.Join(c.dir, f.name)
		b, err := os.ReadFile(path)
		if err != nil {
			return ld, fmt.Errorf("sweep: %w", err)
		}
		owns, upto := func(int) bool { return true }, c.rows
		if f.shard.sharded() {
			nl := bytes.IndexByte(b, '\n')
			if nl < 0 {
				return ld, fmt.Errorf("sweep: shard file %s has no header line", path)
			}
			var h shardHeader
			if err := strictJSON(b[:nl], &h); err != nil {
				return ld, fmt.Errorf("sweep: shard file %s: header: %w", path, err)
			}
			if err := c.checkHeader(h, f.shard, path); err != nil {
				return ld, err
			}
			b = b[nl+1:]
			owns, upto = f.shard.owns, h.Upto
			ld.split = f.shard.Count
			ld.upto[f.shard.Index] = h.Upto
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), maxCacheLine)
		complete := len(b) > 0 && b[len(b)-1] == '\n'
		lines := bytes.Count(b, []byte{'\n'})
		first := 1
		if f.shard.sharded() {
			first = 2
		}
		for ln := first; sc.Scan(); ln++ {
			if ln-first+1 > lines && !complete {
				break // torn last line of an interrupted write
			}
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			i, err := fn(sc.Bytes())
			if err != nil {
				return ld, fmt.Errorf("sweep: cache file %s:%d is damaged: %w; delete the file (the sweep computes its images again) or the table's folder %s", path, ln, err, c.dir)
			}
			if !owns(i) || i >= upto {
				return ld, fmt.Errorf("sweep: cache file %s:%d: row %d is not one of shard %s's rows below %d; delete the file (the sweep computes its images again) or the table's folder %s", path, ln, i, f.shard, upto, c.dir)
			}
		}
		if err := sc.Err(); err != nil {
			return ld, fmt.Errorf("sweep: %s: %w", path, err)
		}
	}
	return ld, nil
}

// shardFileNames lists shard files' names, shortened past three.
func (c *cacheTable) shardFileNames(shs []Shard) string {
	var names []string
	for i, s := range shs {
		if i == 3 {
			names = append(names, "…")
			break
		}
		names = append(names, "shard-"+s.tag()+".jsonl")
	}
	return strings.Join(names, ", ")
}

// checkHeader checks a shard file's header against the table and the
// file's name.
func (c *cacheTable) checkHeader(h shardHeader, sh Shard, path string) error {
	if h.Shard != sh.Index || h.Of != sh.Count {
		return fmt.Errorf("%s: shard file %s says it is shard %d/%d", c.what, path, h.Shard, h.Of)
	}
	if h.Upto < 0 || h.Upto > c.rows {
		return fmt.Errorf("%s: shard file %s holds rows below %d, but the table has %d", c.what, path, h.Upto, c.rows)
	}
	var want bytes.Buffer
	if err := json.Compact(&want, c.meta); err != nil {
		return err
	}
	if !bytes.Equal(want.Bytes(), h.Meta) {
		return fmt.Errorf("%s: shard file %s was made for other settings (%s); remove it and rerun shard %s", c.what, path, metaDiff(h.Meta, want.Bytes()), sh)
	}
	return nil
}

// metaDiff says how the meta.json got differs from want: which fields,
// and for the key which of its fields (the content hashes of the model
// and data, the settings).
func metaDiff(got, want []byte) string {
	var g, w map[string]json.RawMessage
	if json.Unmarshal(got, &g) != nil || json.Unmarshal(want, &w) != nil {
		return "its header's meta is not a JSON object"
	}
	var diffs []string
	for _, f := range sortedKeys(g, w) {
		if bytes.Equal(g[f], w[f]) {
			continue
		}
		if f != "key" {
			diffs = append(diffs, fmt.Sprintf("its %s is %s where this table's is %s", f, short(g[f]), short(w[f])))
			continue
		}
		var gk, wk map[string]json.RawMessage
		if json.Unmarshal(g[f], &gk) != nil || json.Unmarshal(w[f], &wk) != nil {
			diffs = append(diffs, fmt.Sprintf("its key is %s where this table's is %s", short(g[f]), short(w[f])))
			continue
		}
		for _, kf := range sortedKeys(gk, wk) {
			if !bytes.Equal(gk[kf], wk[kf]) {
				diffs = append(diffs, fmt.Sprintf("its key's %s is %s where this table's is %s", kf, short(gk[kf]), short(wk[kf])))
			}
		}
	}
	if len(diffs) == 0 {
		return "its meta is formatted differently"
	}
	return strings.Join(diffs, "; ")
}

// sortedKeys returns the keys of a and b, sorted, each once.
func sortedKeys(a, b map[string]json.RawMessage) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]json.RawMessage{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// short shortens a JSON value for a message (a sha256 to 12 digits).
func short(v json.RawMessage) string {
	if v == nil {
		return "(none)"
	}
	s := string(v)
	if len(s) > 40 {
		s = s[:13] + "…" + s[len(s)-1:]
	}
	return s
}

// othersOf describes the files of shards missing from c that other
// tables of the same namespace in the cache root hold: the shards of the
// same job made with another model, data set or settings.
func (c *cacheTable) othersOf(missing []Shard) []string {
	var out []string
	var want bytes.Buffer
	if json.Compact(&want, c.meta) != nil {
		return nil
	}
	for _, sh := range missing {
		paths, _ := filepath.Glob(filepath.Join(c.root, c.ns+"-*", "shard-"+sh.tag()+".jsonl"))
		for _, p := range paths {
			if filepath.Dir(p) == c.dir {
				continue
			}
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			line, err := bufio.NewReaderSize(f, 1<<16).ReadSlice('\n')
			f.Close()
			var h shardHeader
			if err != nil || json.Unmarshal(line, &h) != nil {
				continue
			}
			out = append(out, fmt.Sprintf("%s is a shard %s of other settings, not used (%s)", p, sh, metaDiff(h.Meta, want.Bytes())))
			if len(out) == 3 {
				return out
			}
		}
	}
	return out
}

// A checkpoint is one writer's checkpoint file, created on its first line.
type checkpoint struct {
	path string
	f    *os.File
}

// checkpoint returns the checkpoint file of one worker of the sweep
// process stamp, working on shard sh (the zero Shard: the whole table).
func (c *cacheTable) checkpoint(sh Shard, stamp int64, worker int) *checkpoint {
	name := fmt.Sprintf("part-%d-%d.jsonl", stamp, worker)
	if sh.sharded() {
		name = fmt.Sprintf("part-%s-%d-%d.jsonl", sh.tag(), stamp, worker)
	}
	return &checkpoint{path: filepath.Join(c.dir, name)}
}

// append writes v as one JSON line with a single write call, so a killed
// process leaves at most a torn last line.
func (w *checkpoint) append(v any) error {
	if w.f == nil {
		f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|os.O_EXCL, 0o644)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		w.f = f
	}
	var buf bytes.Buffer
	if err := writeLine(&buf, v); err != nil {
		return err
	}
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	return nil
}

// close closes the file, if one was created.
func (w *checkpoint) close() error {
	if w.f == nil {
		return nil
	}
	return w.f.Close()
}

// writeShard writes shard sh's file (atomically) with its rows
// line(i) for i < upto, then removes the shard's checkpoint files.
func (c *cacheTable) writeShard(sh Shard, upto int, line func(i int) any) error {
	var buf bytes.Buffer
	h := shardHeader{Shard: sh.Index, Of: sh.Count, Upto: upto}
	var meta bytes.Buffer
	if err := json.Compact(&meta, c.meta); err != nil {
		return err
	}
	h.Meta = meta.Bytes()
	if err := writeLine(&buf, h); err != nil {
		return err
	}
	for i := sh.Index; i < upto; i += sh.Count {
		if err := writeLine(&buf, line(i)); err != nil {
			return err
		}
	}
	if err := record.WriteFileAtomic(c.shardFile(sh), buf.Bytes()); err != nil {
		return err
	}
	fs, err := c.list()
	if err != nil {
		return err
	}
	for _, name := range fs.checkpoints {
		if fs.cpShard[name] == sh {
			if err := os.Remove(filepath.Join(c.dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("sweep: %w", err)
			}
		}
	}
	return nil
}

// consolidate writes table.jsonl from line(0), …, line(n-1) (atomically)
// when checkpoint or shard files exist or it is missing, then removes the
// checkpoint and shard files.
func (c *cacheTable) consolidate(n int, line func(i int) any) error {
	fs, err := c.list()
	if err != nil {
		return err
	}
	var parts []string
	for _, name := range fs.checkpoints {
		parts = append(parts, filepath.Join(c.dir, name))
	}
	for _, n := range fs.splits() {
		for _, sh := range fs.shards[n] {
			parts = append(parts, c.shardFile(sh))
		}
	}
	if fs.table && len(parts) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		if err := writeLine(&buf, line(i)); err != nil {
			return err
		}
	}
	if err := record.WriteFileAtomic(c.tableFile(), buf.Bytes()); err != nil {
		return err
	}
	for _, p := range parts {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("sweep: %w", err)
		}
	}
	return nil
}

func writeLine(w *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	w.Write(b)
	w.WriteByte('\n')
	return nil
}

// featureLine is one image's row of the features table.
type featureLine struct {
	Image    int       `json:"image"`
	Features []float32 `json:"features"`
}
