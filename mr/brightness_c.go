package mr

import "github.com/amt-dev/amt/rgb"

// BrightnessC is the brightness corruption of ImageNet-C and CIFAR-10-C
// (reference function brightness): in skimage's HSV, V becomes
// clip(V + c, 0, 1), then back to RGB, clipped, ×255 and truncated.
// c by severity 1–5 is 0.05, 0.1, 0.15, 0.2, 0.3 for images of at most
// 32×32 (make_cifar_c.py) and 0.1, 0.2, 0.3, 0.4, 0.5 for larger ones
// (imagenet_c/corruptions.py). It is registered as brightness_c, since
// amt's brightness is the additive Brightness. It does not move boxes.
type BrightnessC struct{ Severity int }

// Name implements Relation ("brightness_c:2").
func (c BrightnessC) Name() string { return sevName("brightness_c", c.Severity) }

// Apply implements Relation.
func (c BrightnessC) Apply(src rgb.Image) rgb.Image {
	mustCorruption("brightness_c", src, c.Severity)
	add := pick(src, c.Severity, [5]float64{.05, .1, .15, .2, .3}, [5]float64{.1, .2, .3, .4, .5})
	return mapHSV(src, func(h, s, v float64) (float64, float64, float64) {
		return h, s, min(max(v+add, 0), 1)
	})
}

// ApplyBoxes implements Relation; the corners stay, W and H are recomputed.
func (BrightnessC) ApplyBoxes(boxes []rgb.Box, _, _ int) []rgb.Box { return keepBoxes(boxes) }

// mapHSV converts every pixel of src to skimage's HSV (values /255),
// applies f, converts back and ends as the reference does
// (np.uint8(np.clip(x, 0, 1) * 255)). The result depends only on the
// pixel, so it is computed once per distinct colour.
func mapHSV(src rgb.Image, f func(h, s, v float64) (float64, float64, float64)) rgb.Image {
	dst := rgb.New(src.W, src.H)
	memo := make(map[[3]uint8][3]uint8)
	p := src.Pix
	for i := 0; i+2 < len(p); i += 3 {
		key := [3]uint8{p[i], p[i+1], p[i+2]}
		out, ok := memo[key]
		if !ok {
			h, s, v := rgb2hsv(float64(p[i])/255, float64(p[i+1])/255, float64(p[i+2])/255)
			r, g, b := hsv2rgb(f(h, s, v))
			out = [3]uint8{toByte(r), toByte(g), toByte(b)}
			memo[key] = out
		}
		dst.Pix[i], dst.Pix[i+1], dst.Pix[i+2] = out[0], out[1], out[2]
	}
	return dst
}
