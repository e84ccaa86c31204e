package preprocess

import (
	"fmt"
	"strings"
)

// An input convention is how an image classifier expects its input
// tensor: the memory layout, the channel order and the pixel scale, with
// the per-channel mean and std of a Norm. The zero values are
// torchvision's convention (NCHW, RGB, pixels scaled to [0, 1]), the one
// every model amt shipped with before conventions existed; Keras/TF
// exports (tf2onnx) are NHWC, Caffe/OpenCV-trained models BGR in 0–255
// with a mean subtracted, Inception-style models [−1, 1].
//
// Classifier applies a convention; Layout, Scale and channel order are
// also read from and written to configuration files by their names
// (ParseLayout, ParseScale, ParseChannelOrder).

// Layout is the memory order of a model's image input.
type Layout int

const (
	// NCHW is channels first, [N, C, H, W] (PyTorch, ONNX's default).
	NCHW Layout = iota
	// NHWC is channels last, [N, H, W, C] (Keras/TensorFlow exports).
	NHWC
)

// Layouts lists the layouts' names, in Layout order.
var Layouts = []string{"nchw", "nhwc"}

func (l Layout) String() string {
	if l >= 0 && int(l) < len(Layouts) {
		return Layouts[l]
	}
	return fmt.Sprintf("Layout(%d)", int(l))
}

// ParseLayout returns the layout named s (nchw or nhwc).
func ParseLayout(s string) (Layout, error) {
	for i, n := range Layouts {
		if s == n {
			return Layout(i), nil
		}
	}
	return 0, fmt.Errorf("layout %q is not one of %s", s, strings.Join(Layouts, ", "))
}

// Shape returns the shape of a batch of n images of c channels and size
// w×h in layout l.
func (l Layout) Shape(n, c, h, w int) []int {
	if l == NHWC {
		return []int{n, h, w, c}
	}
	return []int{n, c, h, w}
}

// Scale says which number a pixel value v (0–255) becomes before a Norm's
// mean is subtracted and its std divides.
type Scale int

const (
	// ScaleUnit is v/255, in [0, 1] (torchvision's ToTensor).
	ScaleUnit Scale = iota
	// ScalePixel is v itself, in [0, 255] (Caffe, OpenCV's blobFromImage,
	// Keras's "caffe" preprocess_input); the mean and std are in pixel
	// units (e.g. mean [123.68, 116.78, 103.94]).
	ScalePixel
	// ScaleSymmetric is v/127.5 − 1, in [−1, 1] (Inception-style models,
	// Keras's "tf" preprocess_input).
	ScaleSymmetric
)

// Scales lists the scales' names, in Scale order.
var Scales = []string{"unit", "pixel", "symmetric"}

func (s Scale) String() string {
	if s >= 0 && int(s) < len(Scales) {
		return Scales[s]
	}
	return fmt.Sprintf("Scale(%d)", int(s))
}

// Range describes the values of s in words ("[0, 1]").
func (s Scale) Range() string {
	switch s {
	case ScalePixel:
		return "[0, 255]"
	case ScaleSymmetric:
		return "[-1, 1]"
	}
	return "[0, 1]"
}

// ParseScale returns the scale named s (unit, pixel or symmetric).
func ParseScale(s string) (Scale, error) {
	for i, n := range Scales {
		if s == n {
			return Scale(i), nil
		}
	}
	return 0, fmt.Errorf("scale %q is not one of %s", s, strings.Join(Scales, ", "))
}

// scaled returns v on scale s, rounded to float32 at each step.
func (s Scale) scaled(v uint8) float32 {
	switch s {
	case ScalePixel:
		return float32(v)
	case ScaleSymmetric:
		return float32(float32(v)/float32(127.5)) - 1
	}
	return float32(v) / float32(255)
}

// ChannelOrders lists the channel orders' names: rgb, then bgr (a
// Classifier's BGR).
var ChannelOrders = []string{"rgb", "bgr"}

// ParseChannelOrder returns whether the channel order named s is BGR.
func ParseChannelOrder(s string) (bgr bool, err error) {
	switch s {
	case "rgb":
		return false, nil
	case "bgr":
		return true, nil
	}
	return false, fmt.Errorf("channel order %q is not one of %s", s, strings.Join(ChannelOrders, ", "))
}

// ChannelOrder names the channel order: "bgr" when bgr, else "rgb".
func ChannelOrder(bgr bool) string {
	if bgr {
		return "bgr"
	}
	return "rgb"
}
