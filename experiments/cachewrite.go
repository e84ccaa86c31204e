package experiments

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/amt-dev/amt/experiments/record"
)

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
