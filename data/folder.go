package data

import (
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/amt-dev/amt/internal/plural"
)

// Folder is a data set of the PNG and JPEG files in one folder (not its
// subfolders), in byte order of their names. Its cases are unlabelled
// (Label −1); use it to test a model on one's own images.
type Folder struct {
	dir     string
	names   []string
	skipped []string // "name: why"
	dec     Decoder
	// sizes are the images' sizes from their headers; w, h their common
	// size (0 when they differ).
	sizes []image.Point
	w, h  int
}

// imageExts are the file name extensions Folder reads (case-insensitive).
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true}

// OpenFolder lists the .png, .jpg and .jpeg files of dir (case-insensitive
// extensions; hidden files, other files and subfolders are ignored) and
// reads each one's header, within the default pixel budget
// (DefaultMaxPixels; use [Open] with Spec.MaxPixels for another). It is an
// error if dir holds no such file, if a header cannot be read, or if an
// image is over the budget: the error names the files (a *TooLargeError
// is in its chain for an image over the budget).
func OpenFolder(dir string) (*Folder, error) { return openFolder(dir, Decoder{}) }

// maxListed is the most files an error lists by name.
const maxListed = 3

func openFolder(dir string, dec Decoder) (*Folder, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("folder: %w", err)
	}
	f := &Folder{dir: dir, dec: dec}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			if !e.IsDir() {
				f.skipped = append(f.skipped, name+": hidden")
			}
			continue
		}
		if !imageExts[strings.ToLower(filepath.Ext(name))] {
			if !e.IsDir() {
				f.skipped = append(f.skipped, name+": not PNG or JPEG (.png, .jpg, .jpeg)")
			}
			continue
		}
		// What the name leads to, through a symbolic link: a folder (or a
		// link to one) is skipped as subfolders are; a FIFO, a device or a
		// socket named like an image is an error here, before anything
		// opens it (opening a FIFO blocks until a writer comes).
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("folder: %w", err)
		}
		if fi.IsDir() {
			f.skipped = append(f.skipped, name+": a folder")
			continue
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("folder: %s: %s is not a regular file (%s): remove it or move it out of the folder", dir, name, kindOf(fi.Mode()))
		}
		f.names = append(f.names, name)
	}
	if len(f.names) == 0 {
		return nil, fmt.Errorf("folder: %s holds no .png, .jpg or .jpeg file%s", dir, listSkipped(f.skipped))
	}
	sort.Strings(f.names)
	if err := f.checkHeaders(); err != nil {
		return nil, err
	}
	return f, nil
}

// checkHeaders reads every image's size from its header (a few hundred
// bytes each): a file that is not a PNG or JPEG, or an image over the
// budget, is an error before any long work starts. It records the common
// size, if any.
func (f *Folder) checkHeaders() error {
	var big []string
	var tooLarge *TooLargeError
	for i, name := range f.names {
		p := filepath.Join(f.dir, name)
		cfg, err := f.dec.ConfigFile(p)
		var tl *TooLargeError
		if errors.As(err, &tl) {
			if tooLarge == nil {
				tooLarge = tl
			}
			big = append(big, fmt.Sprintf("%s (%d×%d)", name, tl.Width, tl.Height))
			continue
		}
		if err != nil {
			return fmt.Errorf("folder: %w", err)
		}
		f.sizes = append(f.sizes, image.Pt(cfg.Width, cfg.Height))
		if i == 0 {
			f.w, f.h = cfg.Width, cfg.Height
		} else if cfg.Width != f.w || cfg.Height != f.h {
			f.w, f.h = -1, -1
		}
	}
	if n := len(big); n > 0 {
		more := ""
		if len(big) > maxListed {
			more = fmt.Sprintf(" and %d more", len(big)-maxListed)
			big = big[:maxListed]
		}
		return &explained{msg: fmt.Sprintf("folder: %s: %d of the %d images %s larger than the limit of %d pixels: %s%s",
			f.dir, n, len(f.names), isAre(n), tooLarge.Max, strings.Join(big, ", "), more), err: tooLarge}
	}
	if f.w < 0 {
		f.w, f.h = 0, 0
	}
	return nil
}

// Len returns the number of images.
func (f *Folder) Len() int { return len(f.names) }

// Names returns the image file names in case order.
func (f *Folder) Names() []string { return append([]string(nil), f.names...) }

// Case decodes image i.
func (f *Folder) Case(i int) (Case, error) {
	if err := checkIndex(i, f.Len()); err != nil {
		return Case{}, err
	}
	img, err := f.dec.DecodeFile(filepath.Join(f.dir, f.names[i]))
	if err != nil {
		return Case{}, fmt.Errorf("folder: %w", err)
	}
	return Case{Index: i, ID: int64(i), Name: f.names[i], Image: img, Label: -1}, nil
}

// Size returns image i's size as its header gives it, without decoding
// it. It panics if i is out of range.
func (f *Folder) Size(i int) (w, h int) { return f.sizes[i].X, f.sizes[i].Y }

// Info describes the folder. Width and Height are the images' size when
// their headers all give the same one, 0 otherwise.
func (f *Folder) Info() Info {
	return Info{Format: "folder", Path: f.dir, Len: f.Len(), Width: f.w, Height: f.h, Skipped: append([]string(nil), f.skipped...)}
}

// SkippedNote says which files of an image folder are not read (Skipped),
// the first few and how many more, for a line to the user; "" when none
// are.
func (i Info) SkippedNote() string {
	if len(i.Skipped) == 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s not read%s", i.Path, plural.Count(len(i.Skipped), "file"), listSkipped(i.Skipped))
}

// listSkipped says which files a folder skipped, for an error: the first
// maxListed, then how many more.
func listSkipped(s []string) string {
	if len(s) == 0 {
		return ""
	}
	more := ""
	if len(s) > maxListed {
		more = fmt.Sprintf("; and %d more", len(s)-maxListed)
		s = s[:maxListed]
	}
	return fmt.Sprintf(" (skipped %s%s)", strings.Join(s, "; "), more)
}

// isAre is the verb of n things.
func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// kindOf names a file type for an error.
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
