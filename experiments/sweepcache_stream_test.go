package experiments

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A cache file is read line by line: loading a 48 MB table allocates a
// few buffers, not the file; a torn last line is left out, blank lines
// skipped, and a line longer than the reader's buffer is read whole.
func TestCacheFileStreamed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "table.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	row := strings.Repeat("x", 479) + "\n"
	const rows = 100_000
	for i := 0; i < rows; i++ {
		w.WriteString(row)
		if i == 10 {
			w.WriteString("\n")
		}
	}
	w.WriteString(`{"torn`)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := &cacheTable{dir: dir, rows: rows, what: "sweep"}
	var ld loaded
	n := 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err = c.loadFile(path, Shard{}, &ld, func(line []byte) (int, error) {
		if len(line) != 479 {
			t.Fatalf("row %d: %d bytes", n, len(line))
		}
		n++
		return n - 1, nil
	})
	runtime.ReadMemStats(&after)
	if err != nil || n != rows {
		t.Fatalf("%d rows, %v; want %d, no error", n, err, rows)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("loading a %d MB file allocated %d MB", rows*480>>20, alloc>>20)
	}
	var buf []byte
	r := bufio.NewReaderSize(strings.NewReader(strings.Repeat("y", 100)+"\nz"), 16)
	if line, ok, err := readCacheLine(r, &buf); string(line) != strings.Repeat("y", 100) || !ok || err != nil {
		t.Errorf("a line across buffer fills: %d bytes, %v, %v", len(line), ok, err)
	}
	if line, ok, err := readCacheLine(r, &buf); string(line) != "z" || ok || err != nil {
		t.Errorf("the torn last line: %q, %v, %v", line, ok, err)
	}
}
