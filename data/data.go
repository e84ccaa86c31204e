// Package data provides the source test cases of adaptive metamorphic
// testing: images (with a class label or detection ground truth) read from
// the CIFAR-10 binary format, the IDX format of MNIST and Fashion-MNIST
// (grey images, given to the pipeline as RGB with R = G = B), a COCO
// instances JSON file with its JPEG folder, or a plain folder of PNG/JPEG
// images.
//
// Every format is a [Source]: a random-access, lazily decoded list of
// [Case] values that is safe for concurrent use. [Order] and [Sampler] give
// the seeded orders in which an experiment visits the cases, and [FetchCIFAR10]
// downloads the official CIFAR-10 test set.
//
// Images are decoded with Go's image/jpeg and image/png. Go's JPEG decoder
// is not bit-identical to libjpeg-turbo (what Pillow, and so the original
// Python tool, used): on the COCO subset the decoded pixels differ by about
// 0.24 grey levels on average (at most 4), which changes about 1 % of the
// detection verdicts. CIFAR-10 records are raw bytes and exact.
package data

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/rgb"
)

// Case is one source test case.
type Case struct {
	// Index is the case's position in its source (0-based); it is the
	// "image" column of a verdict table.
	Index int
	// ID is the data set's own id of the image: the COCO image id, or
	// Index for CIFAR-10 and image folders.
	ID int64
	// Name is the image's file name (COCO, folders) or "cifar10[Index]".
	Name string
	// Image holds the decoded pixels.
	Image rgb.Image
	// Label is the class index, or -1 when the source has no labels
	// (COCO, folders).
	Label int
	// Annotations is the detection ground truth in file order (COCO only;
	// nil for classification sources).
	Annotations []Annotation
	// Unannotated marks a COCO image that has no annotation at all. Such
	// images are kept (COCO keeps them; the original tool scored them as
	// always passing).
	Unannotated bool
}

// Annotation is one COCO ground-truth object.
type Annotation struct {
	// ID is the annotation's id in the JSON file.
	ID int64
	// CategoryID is the COCO category id (1..90 with gaps for COCO).
	CategoryID int
	// Class is the category's class index: the position of CategoryID
	// among the file's category ids sorted ascending (the usual coco.names
	// order, which detection models use).
	Class int
	// Box is the annotation's [x, y, w, h] box in pixels, as in the file:
	// it is not clipped to the image.
	Box rgb.Box
	// IsCrowd is COCO's iscrowd flag.
	IsCrowd bool
	// Area is COCO's area field (the segmentation's area).
	Area float64
}

// Source is a data set of source test cases.
type Source interface {
	// Len returns the number of cases.
	Len() int
	// Case decodes case i (0 <= i < Len()). It is safe for concurrent use.
	Case(i int) (Case, error)
	// Info describes the data set.
	Info() Info
}

// A Sizer tells an image's size without decoding it (from a header, or
// the data set's metadata). Every Source of this package is one.
type Sizer interface {
	Size(i int) (w, h int)
}

// Info describes a data set, for "amt data inspect" and for keying caches.
type Info struct {
	// Format is "cifar10", "idx", "fashion-mnist", "coco" or "folder".
	Format string
	// Path is the file (CIFAR-10 binary, IDX images, COCO JSON) or folder
	// it was read from.
	Path string
	// ImageDir is the folder the COCO images are read from ("" otherwise).
	ImageDir string
	// Len is the number of cases (records or images).
	Len int
	// Width and Height are the common image size when all images share
	// one (32×32 for CIFAR-10), 0 when unknown or varying.
	Width, Height int
	// Classes lists the classes (CIFAR-10) or categories (COCO) in class
	// index order; nil for folders.
	Classes []Class
	// Annotations, Crowd and Unannotated count COCO annotations, crowd
	// annotations and images without annotations.
	Annotations, Crowd, Unannotated int
	// Skipped lists the files of an image folder it does not read, each
	// with the reason ("a.gif: not PNG or JPEG", ".x.png: hidden"), so
	// that none is left out without a word.
	Skipped []string
}

// Class is one class of a classification data set or one category of a
// detection data set.
type Class struct {
	// Index is the class index (the label of CIFAR-10, the position of the
	// category id in ascending order for COCO).
	Index int
	// ID is the COCO category id (= Index for CIFAR-10).
	ID int
	// Name is the class or category name.
	Name string
	// Count is the number of records with this label (CIFAR-10) or of
	// annotations with this category (COCO).
	Count int
	// Images is the number of images holding at least one annotation of
	// this category (COCO only).
	Images int
}

// Spec selects and configures a data set; it is what experiment configs
// hold.
type Spec struct {
	// Format is "cifar10", "idx", "fashion-mnist" (IDX with Fashion-MNIST's
	// class names), "coco" or "folder"; empty means detect it from Path
	// (see [DetectFormat]).
	Format string `yaml:"format" json:"format"`
	// Path is the CIFAR-10 binary file, the IDX image file, the COCO
	// instances JSON file or the image folder. A relative path that does not exist relative to the
	// working directory is looked up in [AssetsDir].
	Path string `yaml:"path" json:"path"`
	// Images is the COCO image folder; empty means "next to the JSON file"
	// (see [OpenCOCO]). Relative paths are resolved like Path.
	Images string `yaml:"images,omitempty" json:"images,omitempty"`
	// Labels is an IDX data set's label file; empty means the file named
	// by [IDXLabelPath] when it exists (else the images are unlabelled).
	// Relative paths are resolved like Path.
	Labels string `yaml:"labels,omitempty" json:"labels,omitempty"`
	// MaxPixels is the image budget: the largest width × height accepted
	// (checked from each image's header before decoding); 0 means
	// DefaultMaxPixels. CIFAR-10 images are always 32×32.
	MaxPixels int64 `yaml:"max_pixels,omitempty" json:"max_pixels,omitempty"`
}

// formats lists the supported data set formats.
var formats = []string{"cifar10", "idx", "fashion-mnist", "coco", "folder"}

// Open opens the data set that spec describes.
func Open(spec Spec) (Source, error) {
	if spec.Path == "" {
		return nil, fmt.Errorf("data: no path given (want a CIFAR-10 .bin file, an IDX image file, a COCO instances .json file or an image folder)")
	}
	path, err := ResolvePath(spec.Path)
	if err != nil {
		return nil, err
	}
	format := spec.Format
	if format == "" {
		if format, err = DetectFormat(path); err != nil {
			return nil, err
		}
	}
	switch format {
	case "cifar10":
		return OpenCIFAR10(path)
	case "idx", "fashion-mnist":
		labels := spec.Labels
		if labels != "" {
			if labels, err = ResolvePath(labels); err != nil {
				return nil, err
			}
		}
		return OpenIDX(path, labels, format)
	case "coco":
		images := spec.Images
		if images != "" {
			if images, err = ResolvePath(images); err != nil {
				return nil, err
			}
		}
		return openCOCO(path, images, Decoder{MaxPixels: spec.MaxPixels})
	case "folder":
		return openFolder(path, Decoder{MaxPixels: spec.MaxPixels})
	}
	return nil, fmt.Errorf("data: unknown format %q%s (want one of %s)", format, suggest.DidYouMean(format, formats), strings.Join(formats, ", "))
}

// DetectFormat guesses a data set's format from its path: a folder is
// "folder", a ".json" file is "coco", a file whose name has "idx" or
// "ubyte" in it and that starts like an IDX file (gzipped or plain) is
// "idx", and any other file is "cifar10".
func DetectFormat(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("data: %w", err)
	}
	switch {
	case st.IsDir():
		return "folder", nil
	case strings.EqualFold(filepath.Ext(path), ".json"):
		return "coco", nil
	case strings.Contains(filepath.Base(path), "idx") || strings.Contains(filepath.Base(path), "ubyte"):
		if isIDX(path) {
			return "idx", nil
		}
	}
	return "cifar10", nil
}

// AssetsEnvVar names the environment variable that sets the assets
// folder (the one holding cifar10/, coco_val2017_subset158/ and models/).
const AssetsEnvVar = "AMT_ASSETS"

// AssetsDir returns the assets folder: $AMT_ASSETS when set, otherwise the
// "assets" folder of the project's shared folder (see internal/sharedpath).
func AssetsDir() (string, error) {
	if dir := os.Getenv(AssetsEnvVar); dir != "" {
		st, err := os.Stat(dir)
		if err != nil {
			return "", fmt.Errorf("data: $%s=%q: %w", AssetsEnvVar, dir, err)
		}
		if !st.IsDir() {
			return "", fmt.Errorf("data: $%s=%q is not a folder", AssetsEnvVar, dir)
		}
		return dir, nil
	}
	dir, err := sharedpath.Find("assets")
	if err != nil {
		return "", fmt.Errorf("data: assets folder: %w (or set $%s)", err, AssetsEnvVar)
	}
	return dir, nil
}

// ResolvePath returns path if it exists; a relative path that does not
// exist relative to the working directory is looked up in [AssetsDir]. The
// error names every place it looked.
func ResolvePath(path string) (string, error) {
	_, err := os.Stat(path)
	if err == nil {
		return path, nil
	}
	if filepath.IsAbs(path) || !os.IsNotExist(err) {
		return "", fmt.Errorf("data: %w", err)
	}
	assets, aerr := AssetsDir()
	if aerr != nil {
		return "", fmt.Errorf("data: %s not found in the working directory, and no assets folder to look in: %v", path, aerr)
	}
	p := filepath.Join(assets, path)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("data: %s not found in the working directory nor in the assets folder %s", path, assets)
	}
	return p, nil
}

// readFileMax reads a regular file of at most limit bytes; what names the
// kind of file expected, for the error.
func readFileMax(path string, limit int64, what string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (want %s)", path, what)
	}
	if st.Size() > limit {
		return nil, fmt.Errorf("%s is %d bytes, more than the %d allowed for %s", path, st.Size(), limit, what)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s grew beyond %d bytes while being read", path, limit)
	}
	return b, nil
}

// checkIndex returns an error if i is not a valid case index of a source
// of n cases.
func checkIndex(i, n int) error {
	if i < 0 || i >= n {
		return fmt.Errorf("data: case index %d out of range [0, %d)", i, n)
	}
	return nil
}

// Images adapts a Source to callers that need only each case's pixels and
// label (such as an experiment runner): Images{Source: src}.Image(i)
// returns Case(i)'s Image and Label.
type Images struct{ Source }

// Image returns case i's image and label (-1 when unlabelled).
func (s Images) Image(i int) (rgb.Image, int, error) {
	c, err := s.Case(i)
	if err != nil {
		return rgb.Image{}, -1, err
	}
	return c.Image, c.Label, nil
}
