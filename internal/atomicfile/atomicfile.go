// Package atomicfile writes files so that readers see either the old
// content or the complete new content, never a half-written file: the bytes
// go to a temporary file in the destination's directory, which is synced to
// disk, closed and renamed over the destination. A rename within one
// directory is atomic on POSIX file systems (and replaces the destination
// on Windows, where Go's os.Rename uses MoveFileEx). On any error the
// temporary file is removed and the destination is left as it was.
//
// This is the module's one writer of that pattern (result files, bandit
// state, extracted data sets, transformed images). It is the approach of
// github.com/google/renameio, without the dependency; like renameio's
// default it does not sync the directory after the rename, so after a power
// loss the destination may still hold its old content, but never a mix.
//
// Two forms:
//
//	atomicfile.WriteFile(path, data, 0o644)        // whole content at once
//
//	f, err := atomicfile.Create(path, 0o644)       // streaming
//	if err != nil { … }
//	defer f.Cleanup()                              // no-op after Commit
//	… write to f (an io.Writer, buffered) …
//	return f.Commit()
package atomicfile

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// tempPattern returns the os.CreateTemp pattern of path's temporary file:
// a hidden name beside it ("dir/.name.tmp123456") that globs for the
// destination's own name ("*.json") do not match.
func tempPattern(path string) string {
	return "." + filepath.Base(path) + ".tmp*"
}

// File is a pending atomic write: an io.Writer into a temporary file that
// Commit renames over the destination and Cleanup discards. Writes are
// buffered. A File is not safe for concurrent use.
type File struct {
	path string
	perm fs.FileMode
	f    *os.File
	w    *bufio.Writer
	done bool  // committed or cleaned up
	err  error // first write error, reported again by Commit
}

// Create starts an atomic write of path, which gets the permission bits
// perm when committed (exactly: the process's umask does not apply, since
// the temporary file is created private). The directory must exist.
func Create(path string, perm fs.FileMode) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), tempPattern(path))
	if err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	return &File{path: path, perm: perm, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Name returns the destination path.
func (f *File) Name() string { return f.path }

// Write writes p to the temporary file.
func (f *File) Write(p []byte) (int, error) {
	if f.done {
		return 0, fmt.Errorf("atomicfile: write to %s after Commit or Cleanup", f.path)
	}
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.w.Write(p)
	if err != nil {
		f.err = fmt.Errorf("atomicfile: writing %s: %w", f.path, err)
		return n, f.err
	}
	return n, nil
}

// Commit flushes and syncs the temporary file, sets its permissions, closes
// it and renames it over the destination. After a failed Commit the
// temporary file is gone and the destination untouched. Commit after
// Commit or Cleanup is an error.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s: Commit after Commit or Cleanup", f.path)
	}
	err := f.err
	if err == nil {
		if err = f.w.Flush(); err != nil {
			err = fmt.Errorf("atomicfile: writing %s: %w", f.path, err)
		}
	}
	if err == nil {
		if err = f.f.Chmod(f.perm); err != nil {
			err = fmt.Errorf("atomicfile: %w", err)
		}
	}
	if err == nil {
		if err = f.f.Sync(); err != nil {
			err = fmt.Errorf("atomicfile: syncing %s: %w", f.path, err)
		}
	}
	if cerr := f.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("atomicfile: writing %s: %w", f.path, cerr)
	}
	if err == nil {
		if err = os.Rename(f.f.Name(), f.path); err != nil {
			err = fmt.Errorf("atomicfile: %w", err)
		}
	}
	f.done = true
	if err != nil {
		os.Remove(f.f.Name())
		return err
	}
	return nil
}

// Cleanup discards a write that was not committed: it closes and removes
// the temporary file. It does nothing after Commit, so it can be deferred
// right after Create.
func (f *File) Cleanup() error {
	if f.done {
		return nil
	}
	f.done = true
	cerr := f.f.Close()
	if err := os.Remove(f.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("atomicfile: %w", err)
	}
	if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		return fmt.Errorf("atomicfile: %w", cerr)
	}
	return nil
}

// WriteFile writes data to path atomically, with permission bits perm
// (as os.WriteFile, but all or nothing). The directory must exist.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	f, err := Create(path, perm)
	if err != nil {
		return err
	}
	defer f.Cleanup()
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.Commit()
}
