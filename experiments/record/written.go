package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/limits"
)

// WrittenFile is the list, at the root of a results folder, of the drawn
// files amt wrote there and may therefore replace or delete later: the
// figures and tables of amt plot, the gallery's sheets of amt run and amt
// check. A file not on the list — a user's notes in figures/, a sheet
// someone else drew, the results of another tool — is never deleted. A
// folder drawn by an amt older than the list has none, so nothing of it
// is deleted as stale (redraw into a fresh folder to drop such files).
const WrittenFile = ".amt-written.json"

// written is WrittenFile's content.
type written struct {
	// Files are slash-separated paths relative to the results folder,
	// sorted.
	Files []string `json:"files"`
}

// ReplaceWritten records that the files amt wrote under the folders
// prefixes (slash-separated, relative to dir: "figures", "gallery/cover")
// are now exactly now (paths relative to dir), and deletes the files it
// had recorded there earlier that are not in now: the stale output of an
// earlier run. Entries of the list that are not plain relative paths are
// ignored, so a crafted list cannot make it delete outside dir.
func ReplaceWritten(dir string, prefixes, now []string) error {
	p := filepath.Join(dir, WrittenFile)
	var w written
	b, err := limits.ReadFile(p, limits.JSONBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return fmt.Errorf("record: %w", err)
	default:
		if err := json.Unmarshal(b, &w); err != nil {
			return fmt.Errorf("record: %s: %w", p, err)
		}
	}
	under := func(f string) bool {
		for _, pre := range prefixes {
			if strings.HasPrefix(f, pre+"/") {
				return true
			}
		}
		return false
	}
	keep := map[string]bool{}
	for _, f := range now {
		keep[filepath.ToSlash(f)] = true
	}
	var out []string
	for _, f := range w.Files {
		if !plainRel(f) {
			continue
		}
		if !under(f) {
			out = append(out, f)
			continue
		}
		if keep[f] {
			continue
		}
		fp := filepath.Join(dir, filepath.FromSlash(f))
		if fi, err := os.Lstat(fp); err == nil && fi.Mode().IsRegular() {
			if err := os.Remove(fp); err != nil {
				return fmt.Errorf("record: removing the stale %s: %w", f, err)
			}
		}
	}
	for f := range keep {
		if plainRel(f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(written{Files: out}); err != nil {
		return err
	}
	return WriteFileAtomic(p, buf.Bytes())
}

// plainRel reports whether f is a clean relative slash path without ..
// elements.
func plainRel(f string) bool {
	if f == "" || path.IsAbs(f) || path.Clean(f) != f || strings.ContainsRune(f, '\\') {
		return false
	}
	for _, e := range strings.Split(f, "/") {
		if e == ".." || e == "." {
			return false
		}
	}
	return true
}
