package data

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"os"

	"github.com/amt-dev/amt/rgb"
)

// MaxPixels is the largest image (width × height) the decoders accept;
// larger images are rejected before their pixels are decoded. It is
// Pillow's decompression-bomb limit (2 × 89,478,485 pixels).
const MaxPixels = 2 * 89478485

// DecodeImage decodes a PNG or JPEG image to RGB the way Pillow's
// convert("RGB") does: grey-scale images are replicated to three
// channels, CMYK JPEGs are converted with (255−C)(255−K)/255 (Go rounds
// slightly differently from Pillow: ±1), a PNG's alpha channel is dropped
// (not composited) and palette images take their palette colours. YCbCr
// JPEGs use Go's decoder, which differs from libjpeg-turbo by a few grey
// levels (see the package documentation).
func DecodeImage(r io.Reader) (rgb.Image, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(8)
	var decode func(io.Reader) (image.Image, error)
	var config func(io.Reader) (image.Config, error)
	switch {
	case bytes.HasPrefix(head, []byte("\x89PNG\r\n\x1a\n")):
		decode, config = png.Decode, png.DecodeConfig
	case bytes.HasPrefix(head, []byte("\xff\xd8")):
		decode, config = jpeg.Decode, jpeg.DecodeConfig
	default:
		return rgb.Image{}, fmt.Errorf("not a PNG or JPEG file (starts with % x)", head)
	}
	// Check the size before decoding the pixels: both formats put it in
	// the first few hundred bytes, so peeking is enough in practice.
	if h, _ := br.Peek(64 << 10); len(h) > 0 {
		if cfg, cerr := config(bytes.NewReader(h)); cerr == nil {
			if px := int64(cfg.Width) * int64(cfg.Height); px > MaxPixels {
				return rgb.Image{}, fmt.Errorf("image is %d×%d = %d pixels, more than the %d allowed", cfg.Width, cfg.Height, px, int64(MaxPixels))
			}
		}
	}
	m, err := decode(br)
	if err != nil {
		return rgb.Image{}, err
	}
	return toRGB(m), nil
}

// decodeFile decodes the PNG or JPEG file at path.
func decodeFile(path string) (rgb.Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return rgb.Image{}, err
	}
	defer f.Close()
	img, err := DecodeImage(f)
	if err != nil {
		return rgb.Image{}, fmt.Errorf("%s: %w", path, err)
	}
	return img, nil
}

// toRGB converts a decoded image to RGB, with fast paths for what the
// JPEG and PNG decoders return.
func toRGB(m image.Image) rgb.Image {
	b := m.Bounds()
	w, h := b.Dx(), b.Dy()
	switch s := m.(type) {
	case *image.YCbCr:
		dst := rgb.New(w, h)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				yi := s.YOffset(b.Min.X+x, b.Min.Y+y)
				ci := s.COffset(b.Min.X+x, b.Min.Y+y)
				r, g, bl := color.YCbCrToRGB(s.Y[yi], s.Cb[ci], s.Cr[ci])
				i := (y*w + x) * 3
				dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = r, g, bl
			}
		}
		return dst
	case *image.CMYK:
		dst := rgb.New(w, h)
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride:]
			for x := 0; x < w; x++ {
				r, g, bl := color.CMYKToRGB(row[4*x], row[4*x+1], row[4*x+2], row[4*x+3])
				i := (y*w + x) * 3
				dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = r, g, bl
			}
		}
		return dst
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
		dst := rgb.New(w, h)
		for y := 0; y < h; y++ {
			row := s.Pix[y*s.Stride:]
			for x := 0; x < w; x++ {
				i := (y*w + x) * 3
				dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = row[8*x], row[8*x+2], row[8*x+4]
			}
		}
		return dst
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
