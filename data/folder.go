package data

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Folder is a data set of the PNG and JPEG files in one folder (not its
// subfolders), in byte order of their names. Its cases are unlabelled
// (Label −1); use it to test a model on one's own images.
type Folder struct {
	dir   string
	names []string
}

// imageExts are the file name extensions Folder reads (case-insensitive).
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true}

// OpenFolder lists the .png, .jpg and .jpeg files of dir (case-insensitive
// extensions; hidden files, other files and subfolders are ignored). It is
// an error if dir holds no such file.
func OpenFolder(dir string) (*Folder, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("folder: %w", err)
	}
	f := &Folder{dir: dir}
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !imageExts[strings.ToLower(filepath.Ext(name))] {
			continue
		}
		if e.IsDir() {
			continue
		}
		f.names = append(f.names, name)
	}
	if len(f.names) == 0 {
		return nil, fmt.Errorf("folder: %s holds no .png, .jpg or .jpeg file", dir)
	}
	sort.Strings(f.names)
	return f, nil
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
	img, err := decodeFile(filepath.Join(f.dir, f.names[i]))
	if err != nil {
		return Case{}, fmt.Errorf("folder: %w", err)
	}
	return Case{Index: i, ID: int64(i), Name: f.names[i], Image: img, Label: -1}, nil
}

// Info describes the folder. Sizes are not read (that would decode every
// image), so Width and Height are 0.
func (f *Folder) Info() Info {
	return Info{Format: "folder", Path: f.dir, Len: f.Len()}
}
