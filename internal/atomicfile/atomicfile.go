// Package atomicfile writes files so that readers see either the old
// content or the complete new content, never a half-written file: the bytes
// go to a temporary file in the destination's directory, which is synced to
// disk, closed and renamed over the destination. A rename within one
// directory is atomic on POSIX file systems (and replaces the destination
// on Windows, where Go's os.Rename uses MoveFileEx). On any error the
// temporary file is removed and the destination is left as it was.
//
// The destination is what path names, not the name itself: a symbolic
// link is followed (through every link, a dangling one included) and its
// target is replaced, so the link stays a link (-csv link.csv writes the
// file link.csv points to); and a destination that exists but is not a
// regular file or a folder — a device such as /dev/stdout, a FIFO, a
// socket — is written in place, opened for writing, since renaming over
// it would replace the device node or the pipe. Such a write is not
// atomic (there is nothing to rename), and Cleanup cannot undo it. A
// folder is an error.
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
	path    string // as given, for messages
	dst     string // the file renamed over: path through its links
	perm    fs.FileMode
	f       *os.File
	w       *bufio.Writer
	inPlace bool  // f is the destination itself (a device, a FIFO)
	done    bool  // committed or cleaned up
	err     error // first write error, reported again by Commit
}

// maxLinks bounds the symbolic links followed (Linux's MAXSYMLINKS).
const maxLinks = 40

// errIsDir is the error of a write to a folder.
var errIsDir = errors.New("is a directory")

// resolve returns what a write of path replaces: path through its
// symbolic links, and whether that is a special file to write in place.
func resolve(path string) (dst string, inPlace bool, err error) {
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular():
		dst, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", false, err
		}
		return dst, false, nil
	case err == nil && fi.IsDir():
		return "", false, &fs.PathError{Op: "write", Path: path, Err: errIsDir}
	case err == nil:
		// A device, a FIFO, a socket: the kernel follows the links when it
		// is opened (also /proc's links to pipes, which name no path).
		return path, true, nil
	case errors.Is(err, fs.ErrNotExist):
		// A new file, or a dangling link: create what the link names.
		p := path
		for range maxLinks {
			l, err := os.Readlink(p)
			if err != nil {
				return p, false, nil // not a link: Create makes it (or says why not)
			}
			if !filepath.IsAbs(l) {
				l = filepath.Join(filepath.Dir(p), l)
			}
			p = l
		}
		return "", false, &fs.PathError{Op: "write", Path: path, Err: errors.New("too many levels of symbolic links")}
	default:
		return "", false, err
	}
}

// Create starts an atomic write of path, which gets the permission bits
// perm when committed (exactly: the process's umask does not apply, since
// the temporary file is created private). The directory must exist.
//
// Through a symbolic link the temporary file goes beside the link's
// target, which Commit replaces; a special file is opened for writing
// here (a FIFO's open waits for a reader, as a shell's redirection does).
func Create(path string, perm fs.FileMode) (*File, error) {
	dst, inPlace, err := resolve(path)
	if err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	if inPlace {
		f, err := os.OpenFile(dst, os.O_WRONLY, 0)
		if err != nil {
			return nil, fmt.Errorf("atomicfile: %w", err)
		}
		return &File{path: path, dst: dst, perm: perm, f: f, w: bufio.NewWriterSize(f, 64<<10), inPlace: true}, nil
	}
	f, err := os.CreateTemp(filepath.Dir(dst), tempPattern(dst))
	if err != nil {
		return nil, fmt.Errorf("atomicfile: %w", err)
	}
	return &File{path: path, dst: dst, perm: perm, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
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
// Commit or Cleanup is an error. A special file written in place is
// flushed and closed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("atomicfile: %s: Commit after Commit or Cleanup", f.path)
	}
	if f.inPlace {
		f.done = true
		err := f.err
		if err == nil {
			if err = f.w.Flush(); err != nil {
				err = fmt.Errorf("atomicfile: writing %s: %w", f.path, err)
			}
		}
		if cerr := f.f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("atomicfile: writing %s: %w", f.path, cerr)
		}
		return err
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
		if err = os.Rename(f.f.Name(), f.dst); err != nil {
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
	if f.inPlace {
		if cerr != nil && !errors.Is(cerr, os.ErrClosed) {
			return fmt.Errorf("atomicfile: %w", cerr)
		}
		return nil
	}
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
