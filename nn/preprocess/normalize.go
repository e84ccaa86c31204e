package preprocess

import (
	"fmt"

	"github.com/amt-dev/amt/rgb"
)

// Norm is a per-channel normalisation (R, G, B): x = (s(v) − Mean)/Std,
// where s is the pixel scale (ScaleUnit, the zero value: v/255).
type Norm struct {
	Mean, Std [3]float32
	// Scale maps a pixel value v (0–255) to the number the mean is
	// subtracted from: v/255 (the zero value), v, or v/127.5 − 1.
	Scale Scale
}

// ImageNet returns torchvision's ImageNet normalisation,
// mean (0.485, 0.456, 0.406) and std (0.229, 0.224, 0.225), the one the
// CIFAR-10 models and the feature extractor expect.
func ImageNet() Norm {
	return Norm{Mean: [3]float32{0.485, 0.456, 0.406}, Std: [3]float32{0.229, 0.224, 0.225}}
}

// Unit returns the normalisation that only scales to [0, 1] (x = v/255).
func Unit() Norm { return Norm{Std: [3]float32{1, 1, 1}} }

// lut holds the float32 value of each byte value, per channel (R, G, B).
type lut [3][256]float32

// table returns the 256 output values of each channel. Every step is
// rounded to float32 like torchvision's ToTensor + Normalize:
// x = float32(v)/255 (or the Scale's value); x = x − mean; x = x / std.
func (n Norm) table() (t lut) {
	for c := 0; c < 3; c++ {
		for v := 0; v < 256; v++ {
			x := n.Scale.scaled(uint8(v))
			x = float32(x - n.Mean[c])
			t[c][v] = float32(x / n.Std[c])
		}
	}
	return t
}

// Validate reports whether every Std is non-zero.
func (n Norm) Validate() error {
	for c, s := range n.Std {
		if s == 0 || s != s {
			return fmt.Errorf("preprocess: normalisation std[%d] = %v, want a non-zero number", c, s)
		}
	}
	return nil
}

// Normalize writes src as a normalised CHW float32 tensor into dst, which
// must hold exactly 3·W·H values (one image of an NCHW batch, e.g.
// batch[i*n:(i+1)*n]): dst[c·H·W + y·W + x] = (Pix[y,x,c]/255 − Mean[c]) /
// Std[c], each step rounded to float32.
func Normalize(dst []float32, src rgb.Image, n Norm) error {
	if err := src.Validate(); err != nil {
		return fmt.Errorf("preprocess: normalize: %w", err)
	}
	if err := n.Validate(); err != nil {
		return err
	}
	plane := src.W * src.H
	if len(dst) != 3*plane {
		return fmt.Errorf("preprocess: normalize: destination holds %d values, a %dx%d image needs 3x%d = %d", len(dst), src.W, src.H, plane, 3*plane)
	}
	t := n.table()
	t.planes(dst[:plane], dst[plane:2*plane], dst[2*plane:], src.Pix)
	return nil
}

// planes converts the RGB pixels of pix through t into the channel rows
// r, g and b (one value per pixel each).
func (t *lut) planes(r, g, b []float32, pix []uint8) {
	pix = pix[:3*len(r)]
	g, b = g[:len(r)], b[:len(r)]
	for i := range r {
		p := pix[3*i : 3*i+3 : 3*i+3]
		r[i], g[i], b[i] = t[0][p[0]], t[1][p[1]], t[2][p[2]]
	}
}

// Classifier is the preprocessing of an image classifier: resize to W×H
// with Pillow's bilinear filter (skipped when the image already has that
// size), then Normalize. For the paper's SqueezeNet it is
// Classifier{W: 224, H: 224, Norm: ImageNet()}; for the 32×32 ResNets
// Classifier{W: 32, H: 32, Norm: ImageNet()}.
//
// With Gray set the model takes one channel: the image is converted to
// luma first, as Pillow's Image.convert("L") does ([Luma]), then resized
// as a mode "L" image ([ResizeGray]) and normalised with Norm's first
// mean and std — the torchvision pipeline Grayscale → Resize → ToTensor →
// Normalize of a grey model. On a grey image (R = G = B) the luma is the
// grey value itself.
//
// Layout and BGR complete the input convention (see Layout): with BGR
// the channels are written in the order B, G, R (Norm's mean and std
// stay R, G, B: they follow the colour, not the position), with NHWC
// channels last. A Gray classifier has one channel, so neither changes its
// values. The zero values are the NCHW RGB convention, computed as
// Normalize does.
type Classifier struct {
	W, H   int
	Norm   Norm
	Gray   bool
	Layout Layout
	BGR    bool
}

// Shape returns the shape of the model input for a batch of n images.
func (c Classifier) Shape(n int) []int { return c.Layout.Shape(n, c.Channels(), c.H, c.W) }

// Channels returns the number of channels of the model input: 1 for a
// Gray classifier, else 3.
func (c Classifier) Channels() int {
	if c.Gray {
		return 1
	}
	return 3
}

// Len returns the number of float32 values of one preprocessed image.
func (c Classifier) Len() int { return c.Channels() * c.W * c.H }

// Luma returns the ITU-R 601-2 luma of the RGB pixels pix (3 bytes per
// pixel) as Pillow's Image.convert("L") computes it, bit for bit
// (libImaging/Convert.c, rgb2l: L = (R·19595 + G·38470 + B·7471 +
// 0x8000) >> 16; checked against Pillow 9.4 on the shared CIFAR-10
// images). The weights sum to 65536, so a grey pixel keeps its value.
func Luma(pix []uint8) []uint8 {
	out := make([]uint8, len(pix)/3)
	for i := range out {
		p := pix[3*i : 3*i+3 : 3*i+3]
		out[i] = uint8((uint32(p[0])*19595 + uint32(p[1])*38470 + uint32(p[2])*7471 + 0x8000) >> 16)
	}
	return out
}

// Into preprocesses src into dst, which must hold exactly c.Len() values.
func (c Classifier) Into(dst []float32, src rgb.Image) error {
	if c.W < 1 || c.H < 1 {
		return fmt.Errorf("preprocess: classifier input size %dx%d must be at least 1x1", c.W, c.H)
	}
	if len(dst) != c.Len() {
		return fmt.Errorf("preprocess: classifier destination holds %d values, want %dx%dx%d = %d", len(dst), c.Channels(), c.H, c.W, c.Len())
	}
	if c.Gray {
		return c.grayInto(dst, src)
	}
	img := src
	if src.W != c.W || src.H != c.H {
		if err := CheckResize(src, c.W, c.H); err != nil {
			return err
		}
		img = Resize(src, c.W, c.H)
	}
	if c.Layout == NCHW && !c.BGR {
		return Normalize(dst, img, c.Norm)
	}
	return c.convention(dst, img)
}

// convention writes img (of size W×H) into dst in the classifier's layout
// and channel order: the values are Normalize's, only their positions
// differ.
func (c Classifier) convention(dst []float32, img rgb.Image) error {
	if err := img.Validate(); err != nil {
		return fmt.Errorf("preprocess: normalize: %w", err)
	}
	if err := c.Norm.Validate(); err != nil {
		return err
	}
	t := c.Norm.table()
	plane := c.W * c.H
	// pos[k] is where colour k (R, G, B) goes: its channel index.
	pos := [3]int{0, 1, 2}
	if c.BGR {
		pos = [3]int{2, 1, 0}
	}
	for i := range plane {
		p := img.Pix[3*i : 3*i+3 : 3*i+3]
		for k := range 3 {
			v := t[k][p[k]]
			if c.Layout == NHWC {
				dst[3*i+pos[k]] = v
			} else {
				dst[pos[k]*plane+i] = v
			}
		}
	}
	return nil
}

// Batch preprocesses imgs into the batch dst (in the classifier's layout), which must hold exactly
// len(imgs)·c.Len() values.
func (c Classifier) Batch(dst []float32, imgs []rgb.Image) error {
	n := c.Len()
	if len(dst) != len(imgs)*n {
		return fmt.Errorf("preprocess: batch destination holds %d values, want %d images x %d = %d", len(dst), len(imgs), n, len(imgs)*n)
	}
	for i, im := range imgs {
		if err := c.Into(dst[i*n:(i+1)*n], im); err != nil {
			return fmt.Errorf("batch image %d: %w", i, err)
		}
	}
	return nil
}

// grayInto is Into for a Gray classifier.
func (c Classifier) grayInto(dst []float32, src rgb.Image) error {
	if err := CheckResize(src, c.W, c.H); err != nil {
		return err
	}
	if err := c.Norm.Validate(); err != nil {
		return err
	}
	l := Luma(src.Pix)
	if src.W != c.W || src.H != c.H {
		l = ResizeGray(l, src.W, src.H, c.W, c.H, Bilinear)
	}
	t := c.Norm.table()
	for i, v := range l {
		dst[i] = t[0][v]
	}
	return nil
}
