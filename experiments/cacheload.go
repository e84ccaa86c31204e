package experiments

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/limits"
)

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
		if err := c.loadFile(filepath.Join(c.dir, f.name), f.shard, &ld, fn); err != nil {
			return ld, err
		}
	}
	return ld, nil
}

// loadFile reads one cache file line by line, never whole (a table file
// grows with the images; one line is at most maxCacheLine): a shard
// file's header first, checked, then each row through fn. A last line
// without its newline is the torn end of an interrupted write and is
// left out; blank lines are skipped.
func (c *cacheTable) loadFile(path string, sh Shard, ld *loaded, fn func([]byte) (int, error)) error {
	f, err := limits.Open(path)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	var buf []byte
	owns, upto := func(int) bool { return true }, c.rows
	ln := 0
	if sh.sharded() {
		line, complete, err := readCacheLine(r, &buf)
		if err != nil {
			return fmt.Errorf("sweep: %s:1: %w", path, err)
		}
		if !complete {
			return fmt.Errorf("sweep: shard file %s has no header line", path)
		}
		var h shardHeader
		if err := strictJSON(line, &h); err != nil {
			return fmt.Errorf("sweep: shard file %s: header: %w", path, err)
		}
		if err := c.checkHeader(h, sh, path); err != nil {
			return err
		}
		owns, upto = sh.owns, h.Upto
		ld.split = sh.Count
		ld.upto[sh.Index] = h.Upto
		ln++
	}
	for {
		line, complete, err := readCacheLine(r, &buf)
		ln++
		if err != nil {
			return fmt.Errorf("sweep: %s:%d: %w", path, ln, err)
		}
		if !complete {
			return nil // the end, or the torn last line of an interrupted write
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		i, err := fn(line)
		if err != nil {
			return fmt.Errorf("sweep: cache file %s:%d is damaged: %w; delete the file (the sweep computes its images again) or the table's folder %s", path, ln, err, c.dir)
		}
		if !owns(i) || i >= upto {
			return fmt.Errorf("sweep: cache file %s:%d: row %d is not one of shard %s's rows below %d; delete the file (the sweep computes its images again) or the table's folder %s", path, ln, i, sh, upto, c.dir)
		}
	}
}

// readCacheLine reads the next line of r into *buf (reused) and returns it
// without its newline; complete is false at the end of the file, with
// what followed the last newline (nothing, or a torn line). A line longer
// than maxCacheLine is an error.
func readCacheLine(r *bufio.Reader, buf *[]byte) (line []byte, complete bool, err error) {
	b := (*buf)[:0]
	defer func() { *buf = b }()
	for {
		frag, err := r.ReadSlice('\n')
		if len(b)+len(frag) > maxCacheLine {
			return nil, false, fmt.Errorf("a line longer than %d bytes", maxCacheLine)
		}
		b = append(b, frag...)
		switch err {
		case nil:
			return b[:len(b)-1], true, nil
		case bufio.ErrBufferFull:
		case io.EOF:
			return b, false, nil
		default:
			return nil, false, err
		}
	}
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
	for _, f := range unionKeys(g, w) {
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
		for _, kf := range unionKeys(gk, wk) {
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

// unionKeys returns the keys of a and b, sorted, each once.
func unionKeys(a, b map[string]json.RawMessage) []string {
	all := make(map[string]json.RawMessage, len(a)+len(b))
	maps.Copy(all, a)
	maps.Copy(all, b)
	return slices.Sorted(maps.Keys(all))
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
