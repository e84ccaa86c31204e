package data

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/rgb"
)

// CIFAR-10 binary record layout: one label byte, then the 32×32 red,
// green and blue planes (row-major, 1,024 bytes each).
const (
	CIFARSide       = 32
	cifarPlane      = CIFARSide * CIFARSide
	CIFARRecordSize = 1 + 3*cifarPlane // 3,073 bytes
)

// cifar10Classes are the standard CIFAR-10 class names in label order, as
// listed in the official batches.meta.txt.
var cifar10Classes = [10]string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// CIFAR10ClassNames returns the standard CIFAR-10 class names in label order.
func CIFAR10ClassNames() []string { return append([]string(nil), cifar10Classes[:]...) }

// CIFAR10 is a CIFAR-10 data set in the official binary record format,
// held in memory (a 10,000-record batch is 30 MB).
type CIFAR10 struct {
	path    string
	raw     []byte
	classes []string
}

// maxCIFARFile bounds the size of a CIFAR-10 binary file read into memory:
// about 700,000 records (the whole data set is 60,000).
const maxCIFARFile = 2 << 30

// OpenCIFAR10 reads a CIFAR-10 binary file of any number of records. The
// class names come from batches.meta.txt beside the file when it exists,
// otherwise they are the standard ten.
func OpenCIFAR10(path string) (*CIFAR10, error) {
	raw, err := readFileMax(path, maxCIFARFile, "a CIFAR-10 binary file")
	if err != nil {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	classes := CIFAR10ClassNames()
	meta := filepath.Join(filepath.Dir(path), "batches.meta.txt")
	if b, err := os.ReadFile(meta); err == nil {
		if classes, err = parseClassNames(b); err != nil {
			return nil, fmt.Errorf("cifar10: %s: %w", meta, err)
		}
	} else if !os.IsNotExist(err) {
		return nil, fmt.Errorf("cifar10: %w", err)
	}
	c, err := NewCIFAR10(raw, classes)
	if err != nil {
		return nil, fmt.Errorf("cifar10: %s: %w", path, err)
	}
	c.path = path
	return c, nil
}

// NewCIFAR10 returns a data set over raw CIFAR-10 records (not copied).
// classes names the labels; nil means the standard ten. It is an error if
// raw is empty or not a whole number of 3,073-byte records, or if a label
// has no class name.
func NewCIFAR10(raw []byte, classes []string) (*CIFAR10, error) {
	if classes == nil {
		classes = CIFAR10ClassNames()
	}
	if len(classes) == 0 || len(classes) > 256 {
		return nil, fmt.Errorf("need 1 to 256 class names, got %d", len(classes))
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("empty file: a CIFAR-10 binary file holds records of %d bytes", CIFARRecordSize)
	}
	if rem := len(raw) % CIFARRecordSize; rem != 0 {
		return nil, fmt.Errorf("size %d bytes is not a multiple of the %d-byte CIFAR-10 record: it holds %d whole records and %d extra bytes (truncated or not a CIFAR-10 binary file?)",
			len(raw), CIFARRecordSize, len(raw)/CIFARRecordSize, rem)
	}
	n := len(raw) / CIFARRecordSize
	for i := 0; i < n; i++ {
		if l := int(raw[i*CIFARRecordSize]); l >= len(classes) {
			return nil, fmt.Errorf("record %d (byte offset %d) has label %d, but there are only %d classes (not a CIFAR-10 binary file? CIFAR-100 records are 3,074 bytes)",
				i, i*CIFARRecordSize, l, len(classes))
		}
	}
	return &CIFAR10{raw: raw, classes: classes}, nil
}

// parseClassNames reads a batches.meta.txt: one class name per line,
// blank lines ignored.
func parseClassNames(b []byte) ([]string, error) {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if s := strings.TrimSpace(sc.Text()); s != "" {
			names = append(names, s)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("no class names (want one per line)")
	}
	return names, nil
}

// Len returns the number of records.
func (c *CIFAR10) Len() int { return len(c.raw) / CIFARRecordSize }

// Classes returns the class names in label order.
func (c *CIFAR10) Classes() []string { return append([]string(nil), c.classes...) }

// Label returns record i's label without decoding its image. It panics if
// i is out of range.
func (c *CIFAR10) Label(i int) int { return int(c.raw[i*CIFARRecordSize]) }

// Size returns 32, 32: every record is a 32×32 image.
func (c *CIFAR10) Size(int) (w, h int) { return CIFARSide, CIFARSide }

// Case returns record i as a 32×32 image with its label.
func (c *CIFAR10) Case(i int) (Case, error) {
	if err := checkIndex(i, c.Len()); err != nil {
		return Case{}, err
	}
	rec := c.raw[i*CIFARRecordSize : (i+1)*CIFARRecordSize]
	img := rgb.New(CIFARSide, CIFARSide)
	r, g, b := rec[1:1+cifarPlane], rec[1+cifarPlane:1+2*cifarPlane], rec[1+2*cifarPlane:]
	for p := 0; p < cifarPlane; p++ {
		img.Pix[3*p], img.Pix[3*p+1], img.Pix[3*p+2] = r[p], g[p], b[p]
	}
	return Case{
		Index: i,
		ID:    int64(i),
		Name:  fmt.Sprintf("cifar10[%d]", i),
		Image: img,
		Label: int(rec[0]),
	}, nil
}

// Info describes the data set, with per-class record counts.
func (c *CIFAR10) Info() Info {
	counts := make([]int, len(c.classes))
	for i := 0; i < c.Len(); i++ {
		counts[c.Label(i)]++
	}
	classes := make([]Class, len(c.classes))
	for i, name := range c.classes {
		classes[i] = Class{Index: i, ID: i, Name: name, Count: counts[i]}
	}
	return Info{Format: "cifar10", Path: c.path, Len: c.Len(), Width: CIFARSide, Height: CIFARSide, Classes: classes}
}

// AppendCIFAR10Record appends img and label as one CIFAR-10 binary record.
// It is an error if img is not 32×32 or label is not in [0, 255].
func AppendCIFAR10Record(dst []byte, img rgb.Image, label int) ([]byte, error) {
	if err := img.Validate(); err != nil {
		return dst, err
	}
	if img.W != CIFARSide || img.H != CIFARSide {
		return dst, fmt.Errorf("cifar10: record image must be 32×32, got %d×%d", img.W, img.H)
	}
	if label < 0 || label > 255 {
		return dst, fmt.Errorf("cifar10: label %d does not fit in a byte", label)
	}
	dst = append(dst, byte(label))
	for c := 0; c < 3; c++ {
		for p := 0; p < cifarPlane; p++ {
			dst = append(dst, img.Pix[3*p+c])
		}
	}
	return dst, nil
}
