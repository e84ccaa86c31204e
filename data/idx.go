package data

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/rgb"
)

// IDX is the file format of MNIST and Fashion-MNIST (LeCun et al.,
// "THE MNIST DATABASE of handwritten digits"; Xiao, Rasul & Vollgraf,
// "Fashion-MNIST", 2017): a big-endian header — two zero bytes, a type
// byte (0x08 = unsigned byte), the number of dimensions — then each
// dimension as a uint32, then the values row-major. Images are 3-d
// (magic 0x00000803: count, rows, columns), labels 1-d (0x00000801:
// count). The files are usually gzipped (`*.gz`); both forms are read.
const (
	idxImagesMagic = 0x00000803
	idxLabelsMagic = 0x00000801
)

// maxIDXBytes bounds the pixels of an IDX image file held in memory
// (decompressed): 2 GiB, about 2.7 million 28×28 images (the whole of
// Fashion-MNIST is 70,000). The header's claim is checked against it
// before anything is allocated.
const maxIDXBytes = 2 << 30

// fashionMNISTClasses are Fashion-MNIST's class names in label order, as
// its README lists them.
var fashionMNISTClasses = []string{"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"}

// IDX is a grey-image data set read from an IDX image file and, when one
// is found, its IDX label file, held in memory. Its images are RGB with
// R = G = B = the grey value, so every relation applies unchanged.
type IDX struct {
	path, labelPath string
	format          string // "idx" or "fashion-mnist"
	n, w, h         int
	pix             []byte // n × h × w grey values
	labels          []byte // n labels, or nil when unlabelled
	classes         []string
}

// IDXLabelPath returns the label file that belongs to an IDX image file by
// the MNIST naming convention (…-images-idx3-ubyte[.gz] →
// …-labels-idx1-ubyte[.gz]), or "" when the name does not follow it.
func IDXLabelPath(images string) string {
	dir, base := filepath.Split(images)
	if !strings.Contains(base, "images-idx3") {
		return ""
	}
	return dir + strings.Replace(base, "images-idx3", "labels-idx1", 1)
}

// OpenIDX reads the IDX image file at path and its labels: the file
// labels when it is not "", otherwise [IDXLabelPath]'s file when it
// exists (unlabelled when it does not). format is "idx" (classes named
// by their label number) or "fashion-mnist" (Fashion-MNIST's class names).
// Every size is checked before it is allocated; a truncated file is an
// error naming the file and the first incomplete record.
func OpenIDX(path, labels, format string) (*IDX, error) {
	if format != "idx" && format != "fashion-mnist" {
		return nil, fmt.Errorf("idx: format %q, want idx or fashion-mnist", format)
	}
	d := &IDX{path: path, format: format}
	dims, pix, err := readIDX(path, idxImagesMagic, maxIDXBytes, "an IDX image file (magic 0x00000803)")
	if err != nil {
		return nil, err
	}
	d.n, d.h, d.w, d.pix = dims[0], dims[1], dims[2], pix
	if d.n == 0 {
		return nil, fmt.Errorf("idx: %s holds no images", path)
	}
	explicit := labels != ""
	if !explicit {
		labels = IDXLabelPath(path)
	}
	if labels != "" {
		ldims, lab, err := readIDX(labels, idxLabelsMagic, maxIDXBytes, "an IDX label file (magic 0x00000801)")
		switch {
		case err == nil:
			if ldims[0] != d.n {
				return nil, fmt.Errorf("idx: %s has %d labels, but %s has %d images", labels, ldims[0], path, d.n)
			}
			d.labels, d.labelPath = lab, labels
		case !explicit && errors.Is(err, os.ErrNotExist):
			// No label file beside the images: an unlabelled data set.
		default:
			return nil, err
		}
	}
	maxLabel := -1
	for i, l := range d.labels {
		if format == "fashion-mnist" && int(l) >= len(fashionMNISTClasses) {
			return nil, fmt.Errorf("idx: %s: record %d has label %d, but Fashion-MNIST has %d classes", d.labelPath, i, l, len(fashionMNISTClasses))
		}
		maxLabel = max(maxLabel, int(l))
	}
	switch {
	case format == "fashion-mnist":
		d.classes = fashionMNISTClasses
	case d.labels != nil:
		for l := 0; l <= maxLabel; l++ {
			d.classes = append(d.classes, fmt.Sprint(l))
		}
	}
	return d, nil
}

// readIDX reads an IDX file of unsigned bytes with the given magic (whose
// low byte is the number of dimensions), gzipped or plain, and returns its
// dimensions and values. The values may take at most limit bytes; the
// header's claim is checked before they are allocated.
func readIDX(path string, magic uint32, limit int64, what string) ([]int, []byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("idx: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("idx: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("idx: %s is not a regular file (want %s)", path, what)
	}
	return decodeIDX(f, path, magic, limit, what)
}

// decodeIDX decodes what readIDX reads from r; name names it in errors.
func decodeIDX(r0 io.Reader, path string, magic uint32, limit int64, what string) ([]int, []byte, error) {
	br := bufio.NewReader(r0)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("idx: %s: %w", path, err)
		}
		defer zr.Close()
		r = zr
	}
	ndim := int(magic & 0xff)
	hdr := make([]byte, 4+4*ndim)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, nil, fmt.Errorf("idx: %s: the %d-byte header of %s is incomplete: %v", path, len(hdr), what, err)
	}
	if got := binary.BigEndian.Uint32(hdr); got != magic {
		return nil, nil, fmt.Errorf("idx: %s: magic number 0x%08x, want 0x%08x (%s)", path, got, magic, what)
	}
	dims := make([]int, ndim)
	size := int64(1)
	for i := range dims {
		d := binary.BigEndian.Uint32(hdr[4+4*i:])
		dims[i] = int(d)
		if d > 0 && size > limit/int64(d) {
			return nil, nil, fmt.Errorf("idx: %s: header dimensions %v claim more than the %d bytes allowed for %s", path, dimsOf(hdr[4:]), limit, what)
		}
		size *= int64(d)
	}
	if ndim == 3 && dims[0] > 0 && (dims[1] == 0 || dims[2] == 0) {
		return nil, nil, fmt.Errorf("idx: %s: images of %d×%d pixels", path, dims[2], dims[1])
	}
	record := int64(1)
	for _, d := range dims[1:] {
		record *= int64(d)
	}
	// Read in bounded steps, so that a header that lies about the count
	// costs no more memory than the file really holds.
	vals := make([]byte, 0, min(size, 1<<20))
	for int64(len(vals)) < size {
		step := min(size-int64(len(vals)), 1<<24)
		start := len(vals)
		vals = append(vals, make([]byte, step)...)
		n, err := io.ReadFull(r, vals[start:])
		if err != nil {
			got := int64(start + n)
			return nil, nil, fmt.Errorf("idx: %s is truncated: record %d of %d is incomplete (%d of %d value bytes)", path, got/record, dims[0], got, size)
		}
	}
	if extra, _ := io.Copy(io.Discard, io.LimitReader(r, 1)); extra > 0 {
		return nil, nil, fmt.Errorf("idx: %s has bytes after the %d records its header declares (%v)", path, dims[0], dims)
	}
	return dims, vals, nil
}

// dimsOf decodes a header's dimensions, for messages.
func dimsOf(b []byte) []uint32 {
	out := make([]uint32, len(b)/4)
	for i := range out {
		out[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return out
}

// Len returns the number of images.
func (d *IDX) Len() int { return d.n }

// Size returns the common image size.
func (d *IDX) Size(int) (w, h int) { return d.w, d.h }

// Labelled reports whether the data set has labels.
func (d *IDX) Labelled() bool { return d.labels != nil }

// Case returns image i as RGB (R = G = B) with its label (-1 when
// unlabelled).
func (d *IDX) Case(i int) (Case, error) {
	if err := checkIndex(i, d.n); err != nil {
		return Case{}, err
	}
	plane := d.w * d.h
	img := rgb.New(d.w, d.h)
	for p, v := range d.pix[i*plane : (i+1)*plane] {
		img.Pix[3*p], img.Pix[3*p+1], img.Pix[3*p+2] = v, v, v
	}
	label := -1
	if d.labels != nil {
		label = int(d.labels[i])
	}
	return Case{Index: i, ID: int64(i), Name: fmt.Sprintf("%s[%d]", d.format, i), Image: img, Label: label}, nil
}

// Info describes the data set, with per-class image counts.
func (d *IDX) Info() Info {
	info := Info{Format: d.format, Path: d.path, Len: d.n, Width: d.w, Height: d.h}
	if d.labels == nil {
		return info
	}
	counts := make([]int, len(d.classes))
	for _, l := range d.labels {
		counts[l]++
	}
	for i, name := range d.classes {
		info.Classes = append(info.Classes, Class{Index: i, ID: i, Name: name, Count: counts[i]})
	}
	return info
}

// LabelPath returns the label file read ("" when unlabelled).
func (d *IDX) LabelPath() string { return d.labelPath }

// isIDX reports whether the file at path starts like an IDX file, gzipped
// or plain, of images or labels.
func isIDX(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return false
	}
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false
		}
		r = zr
	}
	var m [4]byte
	if _, err := io.ReadFull(r, m[:]); err != nil {
		return false
	}
	return bytes.Equal(m[:3], []byte{0, 0, 8}) && (m[3] == 1 || m[3] == 3)
}
