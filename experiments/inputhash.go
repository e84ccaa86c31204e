package experiments

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/amt-dev/amt/data"
)

// ctxReader is a reader that stops with ctx.Err() when ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// fileHash returns the hex sha256 of a file's content.
func fileHash(ctx context.Context, path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, f}); err != nil {
		return "", fmt.Errorf("hashing %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// An imageLister is a data set whose images are files that its main file
// only lists (a COCO instances JSON and its image folder).
type imageLister interface {
	ImageFiles() (names, paths []string)
}

// A folderLister is a data set of the image files of one folder that it
// names (data.Folder).
type folderLister interface {
	Names() []string
}

// dataHash returns the hex sha256 that the cache keys and run.json record
// for a data set: pathHash of its path (a CIFAR-10 or IDX file), for an
// IDX data set with labels the hash of that hash and the label file's, for
// an image folder folderHash of the files it reads, and for a data set
// that lists its image files (COCO) the hash of
// the JSON's hash followed by every listed image, in the JSON's order, as
// its name and the sha256 of its content — so that a changed image
// invalidates the cached verdicts and features, not only a changed JSON.
// The images are hashed in parallel (GOMAXPROCS readers).
func dataHash(ctx context.Context, path string, src data.Source) (string, error) {
	if f, ok := src.(folderLister); ok {
		return folderHash(ctx, path, f.Names())
	}
	h, err := pathHash(ctx, path)
	if err != nil {
		return "", err
	}
	if l, ok := src.(interface{ LabelPath() string }); ok && l.LabelPath() != "" {
		// An IDX data set's labels are a file of their own.
		lh, err := fileHash(ctx, l.LabelPath())
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(h + " labels " + lh + "\n"))
		return hex.EncodeToString(sum[:]), nil
	}
	l, ok := src.(imageLister)
	if !ok {
		return h, nil
	}
	names, paths := l.ImageFiles()
	sums := make([]string, len(paths))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(paths); i = int(next.Add(1) - 1) {
				sums[i], errs[i] = fileHash(ctx, paths[i])
				if errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return "", err
		}
	}
	all := sha256.New()
	fmt.Fprintf(all, "%s\n", h)
	for i, name := range names {
		fmt.Fprintf(all, "%s %s\n", name, sums[i])
	}
	return hex.EncodeToString(all.Sum(nil)), nil
}

// folderHash hashes the files of folder dir that an image folder data set
// reads, exactly those (names, as the data set lists them, and
// contents): a file read through a symbolic link is hashed through it, so
// re-pointing the link changes the key, and a file the data set does not
// read (a README, .DS_Store, amt's own results when the output is the
// image folder) does not.
func folderHash(ctx context.Context, dir string, names []string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "folder\n")
	for _, name := range names {
		fh, err := fileHash(ctx, filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", name, fh)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// pathHash hashes a file, or a folder's files (names and contents, sorted
// by name, not recursive).
func pathHash(ctx context.Context, path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return fileHash(ctx, path)
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return "", err
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	h := sha256.New()
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		fh, err := fileHash(ctx, filepath.Join(path, e.Name()))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s %s\n", e.Name(), fh)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
