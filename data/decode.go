package data

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"

	"github.com/amt-dev/amt/rgb"
)

// DefaultMaxPixels is the image budget: the largest image (width ×
// height) the decoders accept unless told otherwise (Spec.MaxPixels,
// data.max_pixels in a configuration, -max-pixels on the command line).
// Larger images are refused from the size in their header, before a single
// pixel is decoded, so a small file that declares a huge image (a
// "decompression bomb") costs nothing.
//
// 2^25 = 33,554,432 pixels admits an 8K UHD frame (7680×4320) and any
// common camera photo, and bounds what one image costs: decoding takes at
// most 8 bytes per pixel for Go's intermediate image plus 3 for the RGB
// copy, about 370 MB at the limit, and a sweep worker then holds the source
// and one full-resolution follow-up at a time (3 bytes per pixel each).
// Pillow, whose limit is 2 × 89,478,485 pixels, decodes straight to 3 bytes
// per pixel; Go's decoders need more, hence the lower default.
const DefaultMaxPixels = 1 << 25

// A TooLargeError reports an image over the pixel budget, found from its
// header (or, for COCO, from the width and height in the JSON).
type TooLargeError struct {
	// Width and Height are the image's declared size; Max is the budget.
	Width, Height int
	Max           int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%d×%d = %d pixels, more than the limit of %d pixels", e.Width, e.Height, int64(e.Width)*int64(e.Height), e.Max)
}

// explained is an error whose message says all, wrapping the typed error
// behind it for errors.As.
type explained struct {
	msg string
	err error
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }

// A Decoder decodes PNG and JPEG images within a pixel budget. The zero
// value uses DefaultMaxPixels.
type Decoder struct {
	// MaxPixels is the largest width × height accepted; ≤ 0 means
	// DefaultMaxPixels.
	MaxPixels int64
}

// max returns the effective budget.
func (d Decoder) max() int64 {
	if d.MaxPixels > 0 {
		return d.MaxPixels
	}
	return DefaultMaxPixels
}

// maxHeader bounds how far into a file the decoders look for the image
// size: a PNG has it at byte 16, a JPEG after its metadata segments (EXIF,
// ICC profiles: at most a few hundred kilobytes in practice).
const maxHeader = 16 << 20

// CheckSize returns a *TooLargeError when a w×h image is over the budget,
// and an error for a non-positive size.
func (d Decoder) CheckSize(w, h int) error {
	if w <= 0 || h <= 0 {
		return fmt.Errorf("image size %d×%d: want a positive width and height", w, h)
	}
	if int64(w)*int64(h) > d.max() {
		return &TooLargeError{Width: w, Height: h, Max: d.max()}
	}
	return nil
}

// formatOf returns the decoders of the format whose signature starts head.
func formatOf(head []byte) (name string, decode func(io.Reader) (image.Image, error), config func(io.Reader) (image.Config, error), err error) {
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		return "PNG", png.Decode, png.DecodeConfig, nil
	case bytes.HasPrefix(head, []byte("\xff\xd8")):
		return "JPEG", jpeg.Decode, jpeg.DecodeConfig, nil
	}
	if len(head) == 0 {
		return "", nil, nil, errors.New("empty file: not a PNG or JPEG image")
	}
	return "", nil, nil, fmt.Errorf("not a PNG or JPEG file (starts with % x)", head)
}

// Config reads the format and size of a PNG or JPEG image from its header
// and checks them against the budget. It reads at most 16 MiB.
func (d Decoder) Config(r io.Reader) (image.Config, string, error) {
	br := bufio.NewReader(io.LimitReader(r, maxHeader))
	head, _ := br.Peek(8)
	name, _, config, err := formatOf(head)
	if err != nil {
		return image.Config{}, "", err
	}
	cfg, err := config(br)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return image.Config{}, name, fmt.Errorf("%s header: no image size in the first %d bytes (truncated file?)", name, maxHeader)
		}
		return image.Config{}, name, fmt.Errorf("%s header: %w", name, err)
	}
	return cfg, name, d.CheckSize(cfg.Width, cfg.Height)
}

// DecodeImage decodes a PNG or JPEG image within the default budget
// (Decoder{}.Decode).
func DecodeImage(r io.Reader) (rgb.Image, error) { return Decoder{}.Decode(r) }

// Decode decodes a PNG or JPEG image to RGB the way Pillow's
// convert("RGB") does: grey-scale images are replicated to three
// channels, CMYK JPEGs are converted with (255−C)(255−K)/255 (Go rounds
// slightly differently from Pillow: ±1), a PNG's alpha channel is dropped
// (not composited) and palette images take their palette colours. YCbCr
// JPEGs use Go's decoder, which differs from libjpeg-turbo by a few grey
// levels (see the package documentation).
//
// The size is read from the header first (image.DecodeConfig) and checked
// against the budget; an image over it is a *TooLargeError and no pixel
// is decoded.
func (d Decoder) Decode(r io.Reader) (rgb.Image, error) {
	// The header goes through a recording reader, so the pixels can be
	// decoded after it without reading r twice.
	var head bytes.Buffer
	if _, _, err := d.Config(io.TeeReader(r, &head)); err != nil {
		return rgb.Image{}, err
	}
	_, decode, _, _ := formatOf(head.Bytes())
	m, err := decode(io.MultiReader(&head, r))
	if err != nil {
		return rgb.Image{}, err
	}
	return toRGB(m), nil
}

// DecodeFile decodes the PNG or JPEG file at path; errors start with the
// path.
func (d Decoder) DecodeFile(path string) (rgb.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return rgb.Image{}, err
	}
	defer f.Close()
	img, err := d.Decode(f)
	if err != nil {
		return rgb.Image{}, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// ConfigFile reads the size of the PNG or JPEG file at path from its
// header and checks it against the budget; errors start with the path.
func (d Decoder) ConfigFile(path string) (image.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return image.Config{}, err
	}
	defer f.Close()
	cfg, _, err := d.Config(f)
	if err != nil {
		return image.Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return cfg, nil
}

// toRGB converts a decoded image to RGB, with fast paths for what the
// JPEG and PNG decoders return.
func toRGB(m image.Image) rgb.Image {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	switch s := m.(type) {
	case *image.YCbCr:
		return fromPixels(w, h, func(x, y int) (uint8, uint8, uint8) {
			yi := s.YOffset(b.Min.X+x, b.Min.Y+y)
			ci := s.COffset(b.Min.X+x, b.Min.Y+y)
			return color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
		})
	case *image.CMYK:
		return fromPixels(w, h, func(x, y int) (uint8, uint8, uint8) {
			p := s.Pix[y*s.Stride+4*x:]
			return color.CMYKToRGB(p[0], p[1], p[2], p[3])
		})
	case *image.NRGBA:
		dst := rgb.New(w, h)
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride:]
			for x := 0; x < w; x++ {
				copy(dst.Pix[(y*w+x)*3:(y*w+x)*3+3], row[4*x:4*x+3])
			}
		}
		return dst
	case *image.NRGBA64:
		return fromPixels(w, h, func(x, y int) (uint8, uint8, uint8) {
			p := s.Pix[y*s.Stride+8*x:]
			return p[0], p[2], p[4] // the high bytes
		})
	case *image.Paletted:
		pal := make([][3]uint8, len(s.Palette))
		for i, c := range s.Palette {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			pal[i] = [3]uint8{n.R, n.G, n.B}
		}
		dst := rgb.New(w, h)
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride:]
			for x := 0; x < w; x++ {
				var c [3]uint8
				if int(row[x]) < len(pal) {
					c = pal[row[x]]
				}
				copy(dst.Pix[(y*w+x)*3:], c[:])
			}
		}
		return dst
	}
	return rgb.FromImage(m)
}

// fromPixels returns the w×h image whose pixel (x, y) is at(x, y).
func fromPixels(w, h int, at func(x, y int) (r, g, b uint8)) rgb.Image {
	dst := rgb.New(w, h)
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := (y*w + x) * 3
			dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = at(x, y)
		}
	}
	return dst
}
