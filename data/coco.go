package data

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/amt-dev/amt/rgb"
)

// COCO is a detection data set: a COCO instances JSON file and the folder
// of its images. Cases come in the order of the file's "images" array;
// each case's annotations are in the order of the "annotations" array
// (the order pycocotools' getAnnIds returns).
type COCO struct {
	path, imageDir string
	images         []cocoImage
	anns           [][]Annotation // per image, file order
	cats           []Class        // sorted by id; Count/Images filled
	catIndex       map[int]int    // category id -> class index
	nAnns, nCrowd  int
	dec            Decoder
}

// cocoImage is one entry of the "images" array.
type cocoImage struct {
	ID       int64  `json:"id"`
	FileName string `json:"file_name"`
	Width    int    `json:"width"`
	Height   int    `json:"height"`
}

type cocoAnnotation struct {
	ID         int64     `json:"id"`
	ImageID    *int64    `json:"image_id"`
	CategoryID *int      `json:"category_id"`
	BBox       []float64 `json:"bbox"`
	IsCrowd    int       `json:"iscrowd"`
	Area       float64   `json:"area"`
}

type cocoCategory struct {
	ID   *int   `json:"id"`
	Name string `json:"name"`
}

type cocoFile struct {
	Images      *[]cocoImage      `json:"images"`
	Annotations *[]cocoAnnotation `json:"annotations"`
	Categories  *[]cocoCategory   `json:"categories"`
}

// OpenCOCO reads a COCO instances JSON file. imageDir is the folder of
// its images; when empty, the first of these that holds the first image's
// file is used: the JSON's folder, its subfolders val2017/, train2017/ and
// images/, and the sibling folders ../val2017/ and ../train2017/ (the
// official layout puts annotations/ beside val2017/).
//
// The file is validated up front, and every error names the file, the
// element and the value: malformed JSON (with line and column), a missing
// or duplicate image or category id, an annotation whose image id or
// category id is unknown, a bbox that is not four finite numbers with
// non-negative width and height, an image without a file name or with a
// non-positive size, an image larger than the default pixel budget
// (DefaultMaxPixels; use [Open] with Spec.MaxPixels for another) and image
// files that do not exist. Boxes that reach outside their image are kept,
// as COCO keeps them.
func OpenCOCO(jsonPath, imageDir string) (*COCO, error) {
	return openCOCO(jsonPath, imageDir, Decoder{})
}

// maxCOCOFile bounds the size of a COCO JSON file read into memory (the
// official instances_train2017.json is 448 MB).
const maxCOCOFile = 2 << 30

func openCOCO(jsonPath, imageDir string, dec Decoder) (*COCO, error) {
	raw, err := readFileMax(jsonPath, maxCOCOFile, "a COCO instances JSON file")
	if err != nil {
		return nil, fmt.Errorf("coco: %w", err)
	}
	c, err := ParseCOCO(raw, jsonPath)
	if err != nil {
		return nil, fmt.Errorf("coco: %w", err)
	}
	c.path, c.dec = jsonPath, dec
	var big []string
	var tooLarge *TooLargeError
	for i, im := range c.images {
		var tl *TooLargeError
		if errors.As(dec.CheckSize(im.Width, im.Height), &tl) {
			if tooLarge == nil {
				tooLarge = tl
			}
			big = append(big, fmt.Sprintf("images[%d] %s (%d×%d)", i, im.FileName, im.Width, im.Height))
		}
	}
	if n := len(big); n > 0 {
		more := ""
		if n > maxListed {
			more = fmt.Sprintf(" and %d more", n-maxListed)
			big = big[:maxListed]
		}
		return nil, &explained{msg: fmt.Sprintf("coco: %s: %d of the %d images %s larger than the limit of %d pixels: %s%s",
			jsonPath, n, len(c.images), isAre(n), tooLarge.Max, strings.Join(big, ", "), more), err: tooLarge}
	}
	if imageDir == "" {
		if imageDir, err = findImageDir(jsonPath, c.images); err != nil {
			return nil, err
		}
	} else if st, err := os.Stat(imageDir); err != nil {
		return nil, fmt.Errorf("coco: image folder: %w", err)
	} else if !st.IsDir() {
		return nil, fmt.Errorf("coco: image folder %s is not a folder", imageDir)
	}
	c.imageDir = imageDir
	var missing []string
	for _, im := range c.images {
		if _, err := os.Stat(filepath.Join(imageDir, im.FileName)); err != nil {
			missing = append(missing, im.FileName)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("coco: %s: %d of the %d images listed in %s are missing, e.g. %s",
			imageDir, len(missing), len(c.images), jsonPath, strings.Join(missing[:min(3, len(missing))], ", "))
	}
	return c, nil
}

func findImageDir(jsonPath string, images []cocoImage) (string, error) {
	dir := filepath.Dir(jsonPath)
	cands := []string{dir,
		filepath.Join(dir, "val2017"), filepath.Join(dir, "train2017"), filepath.Join(dir, "images"),
		filepath.Join(dir, "..", "val2017"), filepath.Join(dir, "..", "train2017")}
	if len(images) == 0 {
		return dir, nil
	}
	for _, c := range cands {
		if _, err := os.Stat(filepath.Join(c, images[0].FileName)); err == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("coco: cannot find the image folder of %s: its first image %s is in none of %s; name the folder with data.images in the configuration (amt data inspect: -images DIR)",
		jsonPath, images[0].FileName, strings.Join(cands, ", "))
}

// ParseCOCO parses and validates a COCO instances JSON document without
// opening any image (Case needs the image folder, so use [OpenCOCO] for a
// usable data set). name (a file name) starts every error message, followed
// by a line:column for JSON errors.
func ParseCOCO(raw []byte, name string) (*COCO, error) {
	var f cocoFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&f); err != nil {
		return nil, jsonError(raw, name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s:%s: extra data after the JSON document", name, lineCol(raw, dec.InputOffset()))
	}
	switch {
	case f.Images == nil:
		return nil, fmt.Errorf(`%s: no "images" array (not a COCO instances file?)`, name)
	case f.Annotations == nil:
		return nil, fmt.Errorf(`%s: no "annotations" array (not a COCO instances file? image-info files without annotations are not supported)`, name)
	case f.Categories == nil:
		return nil, fmt.Errorf(`%s: no "categories" array (not a COCO instances file?)`, name)
	}
	c := &COCO{images: *f.Images, catIndex: map[int]int{}}

	// Categories: class index i <-> i-th id ascending.
	cats := *f.Categories
	for i, cat := range cats {
		if cat.ID == nil {
			return nil, fmt.Errorf("%s: categories[%d] has no id", name, i)
		}
	}
	sorted := append([]cocoCategory(nil), cats...)
	sort.SliceStable(sorted, func(a, b int) bool { return *sorted[a].ID < *sorted[b].ID })
	for i, cat := range sorted {
		if i > 0 && *cat.ID == *sorted[i-1].ID {
			return nil, fmt.Errorf("%s: categories: duplicate id %d (%q and %q)", name, *cat.ID, sorted[i-1].Name, cat.Name)
		}
		c.catIndex[*cat.ID] = i
		c.cats = append(c.cats, Class{Index: i, ID: *cat.ID, Name: cat.Name})
	}

	// Images.
	imgIndex := make(map[int64]int, len(c.images))
	for i, im := range c.images {
		if j, dup := imgIndex[im.ID]; dup {
			return nil, fmt.Errorf("%s: images[%d]: duplicate id %d (also images[%d])", name, i, im.ID, j)
		}
		imgIndex[im.ID] = i
		if im.FileName == "" {
			return nil, fmt.Errorf("%s: images[%d] (id %d): empty or missing file_name", name, i, im.ID)
		}
		if filepath.IsAbs(im.FileName) || strings.Contains(filepath.ToSlash(im.FileName), "../") {
			return nil, fmt.Errorf("%s: images[%d] (id %d): file_name %q must be a plain name inside the image folder", name, i, im.ID, im.FileName)
		}
		if im.Width <= 0 || im.Height <= 0 {
			return nil, fmt.Errorf("%s: images[%d] (id %d, %s): width %d and height %d must be positive", name, i, im.ID, im.FileName, im.Width, im.Height)
		}
	}

	// Annotations, grouped per image in file order.
	c.anns = make([][]Annotation, len(c.images))
	annIDs := make(map[int64]int, len(*f.Annotations))
	catImages := make([]map[int]bool, len(c.cats))
	for i, a := range *f.Annotations {
		if j, dup := annIDs[a.ID]; dup {
			return nil, fmt.Errorf("%s: annotations[%d]: duplicate id %d (also annotations[%d])", name, i, a.ID, j)
		}
		annIDs[a.ID] = i
		if a.ImageID == nil {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): no image_id", name, i, a.ID)
		}
		im, ok := imgIndex[*a.ImageID]
		if !ok {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): image_id %d is not in images", name, i, a.ID, *a.ImageID)
		}
		if a.CategoryID == nil {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): no category_id", name, i, a.ID)
		}
		cls, ok := c.catIndex[*a.CategoryID]
		if !ok {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): unknown category_id %d (not in categories)", name, i, a.ID, *a.CategoryID)
		}
		if len(a.BBox) != 4 {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): bbox has %d numbers, want 4 ([x, y, w, h])", name, i, a.ID, len(a.BBox))
		}
		for _, v := range a.BBox {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("%s: annotations[%d] (id %d): bbox %v is not finite", name, i, a.ID, a.BBox)
			}
		}
		if a.BBox[2] < 0 || a.BBox[3] < 0 {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): bbox %v has a negative width or height", name, i, a.ID, a.BBox)
		}
		if a.IsCrowd != 0 && a.IsCrowd != 1 {
			return nil, fmt.Errorf("%s: annotations[%d] (id %d): iscrowd is %d, want 0 or 1", name, i, a.ID, a.IsCrowd)
		}
		c.anns[im] = append(c.anns[im], Annotation{
			ID:         a.ID,
			CategoryID: *a.CategoryID,
			Class:      cls,
			Box:        rgb.Box{X: a.BBox[0], Y: a.BBox[1], W: a.BBox[2], H: a.BBox[3]},
			IsCrowd:    a.IsCrowd == 1,
			Area:       a.Area,
		})
		c.nAnns++
		if a.IsCrowd == 1 {
			c.nCrowd++
		}
		c.cats[cls].Count++
		if catImages[cls] == nil {
			catImages[cls] = map[int]bool{}
		}
		catImages[cls][im] = true
	}
	for i := range c.cats {
		c.cats[i].Images = len(catImages[i])
	}
	return c, nil
}

// jsonError turns an encoding/json error into one with a line:column.
func jsonError(raw []byte, name string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s:%s: malformed JSON: %v", name, lineCol(raw, se.Offset), se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "document"
		}
		return fmt.Errorf("%s:%s: %s: got a JSON %s, want %s", name, lineCol(raw, te.Offset), field, te.Value, describeJSONType(te.Type))
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return fmt.Errorf("%s:%s: malformed JSON: unexpected end of input", name, lineCol(raw, int64(len(raw))))
	}
	return fmt.Errorf("%s: %w", name, err)
}

// cocoObjects describes the JSON objects of a COCO file, by Go type.
var cocoObjects = map[reflect.Type]string{
	reflect.TypeFor[cocoFile]():       "an object with images, annotations and categories",
	reflect.TypeFor[cocoImage]():      "an image object {id, file_name, width, height}",
	reflect.TypeFor[cocoAnnotation](): "an annotation object {id, image_id, category_id, bbox, iscrowd, area}",
	reflect.TypeFor[cocoCategory]():   "a category object {id, name}",
}

// describeJSONType says in words which JSON value decodes into t ("an
// array of image objects", "an integer"), for errors that would otherwise
// name Go types.
func describeJSONType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if d, ok := cocoObjects[t]; ok {
		return d
	}
	switch t.Kind() {
	case reflect.Pointer:
		return describeJSONType(t.Elem())
	case reflect.Slice, reflect.Array:
		elem := describeJSONType(t.Elem())
		if e, ok := strings.CutPrefix(elem, "an "); ok {
			elem = e
		} else if e, ok := strings.CutPrefix(elem, "a "); ok {
			elem = e
		}
		if i := strings.Index(elem, " {"); i >= 0 {
			elem = elem[:i]
		}
		if !strings.HasSuffix(elem, "s") {
			elem += "s"
		}
		return "an array of " + elem
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return t.String()
}

// lineCol returns "line:col" (1-based) of byte offset off in raw.
func lineCol(raw []byte, off int64) string {
	off = max(0, min(off, int64(len(raw))))
	before := raw[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return fmt.Sprintf("%d:%d", line, col)
}

// Len returns the number of images.
func (c *COCO) Len() int { return len(c.images) }

// Categories returns the categories in class index order (ascending id),
// with their annotation and image counts.
func (c *COCO) Categories() []Class { return append([]Class(nil), c.cats...) }

// ClassOf returns the class index of a category id.
func (c *COCO) ClassOf(categoryID int) (int, bool) {
	i, ok := c.catIndex[categoryID]
	return i, ok
}

// ImageFiles returns the image files of the cases, in case order: each
// image's file name as the JSON gives it (relative to the image folder,
// Info().ImageDir) and its path. Caches key a COCO data set on these
// files' contents as well as on the JSON.
func (c *COCO) ImageFiles() (names, paths []string) {
	names = make([]string, len(c.images))
	paths = make([]string, len(c.images))
	for i, im := range c.images {
		names[i], paths[i] = im.FileName, filepath.Join(c.imageDir, im.FileName)
	}
	return names, paths
}

// Annotations returns image i's annotations in file order without
// decoding the image. The slice must not be modified. It panics if i is
// out of range.
func (c *COCO) Annotations(i int) []Annotation { return c.anns[i] }

// Size returns image i's width and height as the JSON gives them (Case
// checks that the image has that size). It panics if i is out of range.
func (c *COCO) Size(i int) (w, h int) { return c.images[i].Width, c.images[i].Height }

// Case decodes image i (JPEG or PNG; grey-scale and CMYK JPEGs are
// converted to RGB) and returns it with its annotations. It is an error if
// the decoded size differs from the width and height in the JSON.
func (c *COCO) Case(i int) (Case, error) {
	if err := checkIndex(i, c.Len()); err != nil {
		return Case{}, err
	}
	im := c.images[i]
	path := filepath.Join(c.imageDir, im.FileName)
	img, err := c.dec.DecodeFile(path)
	if err != nil {
		return Case{}, fmt.Errorf("coco: image %d (id %d): %w", i, im.ID, err)
	}
	if img.W != im.Width || img.H != im.Height {
		return Case{}, fmt.Errorf("coco: %s: decoded size %d×%d differs from width×height %d×%d in %s (image id %d)",
			path, img.W, img.H, im.Width, im.Height, c.path, im.ID)
	}
	var anns []Annotation
	if len(c.anns[i]) > 0 {
		anns = append([]Annotation(nil), c.anns[i]...)
	} else {
		anns = []Annotation{}
	}
	return Case{
		Index:       i,
		ID:          im.ID,
		Name:        im.FileName,
		Image:       img,
		Label:       -1,
		Annotations: anns,
		Unannotated: len(c.anns[i]) == 0,
	}, nil
}

// Info describes the data set, with per-category annotation and image
// counts.
func (c *COCO) Info() Info {
	info := Info{Format: "coco", Path: c.path, ImageDir: c.imageDir, Len: c.Len(),
		Classes: c.Categories(), Annotations: c.nAnns, Crowd: c.nCrowd}
	for _, a := range c.anns {
		if len(a) == 0 {
			info.Unannotated++
		}
	}
	return info
}
