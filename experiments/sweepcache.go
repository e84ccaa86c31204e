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
	"sort"

	"github.com/amt-dev/amt/experiments/record"
)

// The sweep cache. Each cached table is a folder
// <cache>/<namespace>-<first 20 hex digits of the sha256 of its key's
// JSON>, holding
//
//   - meta.json: what the table is (cacheMeta: its kind, its key, the
//     number of images, the follow-ups or the feature dimension); a folder
//     whose meta.json differs is refused, never overwritten;
//   - checkpoint files part-<stamp>-<worker>.jsonl: one JSON line per
//     finished image, appended by one writer each (stamp names the sweep
//     process, worker its goroutine) with a single write per line, so a
//     kill leaves at most a torn last line, which readers skip;
//   - table.jsonl: the consolidated table, one line per image in image
//     order, written atomically once every image is done; the checkpoint
//     files are removed then.
//
// A reader takes table.jsonl first, then the checkpoint files in name
// order, and keeps the first line of each image. The namespaces are
// "verdicts" (the case study's judgements, one line per image) and
// "features" (the context features): they have separate keys, so a
// feature ablation reuses the verdicts and the other way round. Another
// per-image payload is another namespace with its own key, and a sweep
// split over processes would give each its own checkpoint files.

// cacheMeta is a cached table's meta.json.
type cacheMeta struct {
	Kind     string          `json:"kind"`
	Key      json.RawMessage `json:"key"`
	Images   int             `json:"images"`
	Variants []string        `json:"variants,omitempty"`
	Dim      int             `json:"dim,omitempty"`
}

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
	dir string
}

// openCache returns namespace's table for key in root: it creates the
// folder and its meta.json (m with the key filled in), or checks that an
// existing meta.json describes the same table.
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
	p := filepath.Join(dir, "meta.json")
	got, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		if err := record.WriteFileAtomic(p, want); err != nil {
			return nil, err
		}
		return &cacheTable{dir: dir}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep: %w", err)
	}
	if !bytes.Equal(got, want) {
		return nil, fmt.Errorf("sweep: cache %s was made for other settings (its meta.json differs); remove the directory", dir)
	}
	return &cacheTable{dir: dir}, nil
}

// tableFile is the consolidated table's file.
func (c *cacheTable) tableFile() string { return filepath.Join(c.dir, "table.jsonl") }

// checkpoints lists the checkpoint files, in name order.
func (c *cacheTable) checkpoints() ([]string, error) {
	files, err := filepath.Glob(filepath.Join(c.dir, "part-*.jsonl"))
	sort.Strings(files)
	return files, err
}

// maxCacheLine bounds one line of a cache file (a 512-d feature row is
// about 6 KB, a judgement of 59 follow-ups less than 2 KB).
const maxCacheLine = 1 << 28

// load feeds every complete line of the table, table.jsonl first, then
// the checkpoint files, to fn. A checkpoint's last line may be torn by a
// kill: a final line without a newline is skipped. It stops with ctx.Err()
// between files when ctx is cancelled.
func (c *cacheTable) load(ctx context.Context, fn func([]byte) error) error {
	files, err := c.checkpoints()
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.tableFile()); err == nil {
		files = append([]string{c.tableFile()}, files...)
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("sweep: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(make([]byte, 1<<20), maxCacheLine)
		complete := len(b) > 0 && b[len(b)-1] == '\n'
		lines := bytes.Count(b, []byte{'\n'})
		for ln := 1; sc.Scan(); ln++ {
			if ln > lines && !complete {
				break // torn last line of an interrupted write
			}
			if len(bytes.TrimSpace(sc.Bytes())) == 0 {
				continue
			}
			if err := fn(sc.Bytes()); err != nil {
				return fmt.Errorf("sweep: cache file %s:%d: %w", f, ln, err)
			}
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("sweep: %s: %w", f, err)
		}
	}
	return nil
}

// A checkpoint is one writer's checkpoint file, created on its first line.
type checkpoint struct {
	path string
	f    *os.File
}

// checkpoint returns the checkpoint file of one worker of the sweep
// process stamp.
func (c *cacheTable) checkpoint(stamp int64, worker int) *checkpoint {
	return &checkpoint{path: filepath.Join(c.dir, fmt.Sprintf("part-%d-%d.jsonl", stamp, worker))}
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

// consolidate writes table.jsonl from line(0), …, line(n-1) (atomically)
// when checkpoint files exist or it is missing, then removes the
// checkpoint files.
func (c *cacheTable) consolidate(n int, line func(i int) any) error {
	parts, err := c.checkpoints()
	if err != nil {
		return err
	}
	if _, err := os.Stat(c.tableFile()); err == nil && len(parts) == 0 {
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
