package experiments

import (
	"fmt"
	"strings"

	"github.com/amt-dev/amt/nn/preprocess"
)

// DetectedSUT is what amt infers of a classifier's sut keys from its ONNX
// input shape alone (preprocess.DetectInput): the layout when the shape
// is unambiguous, the channels, the input size when the model fixes it.
// The channel order, the pixel scale, the mean and the std are not in the
// shape: they keep their defaults (torchvision's convention) until the
// user sets them, and the convention check (CheckConvention) warns when
// predictions say they are wrong.
type DetectedSUT struct {
	// Shape is the model's input shape (negative or 0 = dynamic).
	Shape []int
	// Input is what the shape says.
	Input preprocess.InputShape
	// Inferred and NotInferred name the sut keys the shape decides and
	// those it does not, in schema order.
	Inferred, NotInferred []string
}

// DetectSUT reads a classifier's input shape.
func DetectSUT(shape []int) (DetectedSUT, error) {
	in, err := preprocess.DetectInput(shape)
	if err != nil {
		return DetectedSUT{}, err
	}
	d := DetectedSUT{Shape: shape, Input: in}
	add := func(ok bool, key string) {
		if ok {
			d.Inferred = append(d.Inferred, key)
		} else {
			d.NotInferred = append(d.NotInferred, key)
		}
	}
	add(in.Width > 0 && in.Height > 0, "sut.input_size")
	add(in.LayoutKnown, "sut.layout")
	add(in.Channels == 1, "sut.channel_order") // a grey model takes rgb
	add(false, "sut.scale")
	add(false, "sut.mean")
	add(false, "sut.std")
	return d, nil
}

// Summary describes the detection in one line: "layout nhwc, 3 channels
// (colour), input 32×32 (width×height); not inferred: sut.channel_order,
// …".
func (d DetectedSUT) Summary() string {
	in := d.Input
	kind := "colour"
	if in.Channels == 1 {
		kind = "grey: fed the luma"
	}
	layout := in.Layout.String()
	if !in.LayoutKnown {
		layout += " (assumed: the shape allows both)"
	}
	size := fmt.Sprintf("input %d×%d (width×height)", in.Width, in.Height)
	if in.Width == 0 || in.Height == 0 {
		size = "input size not fixed by the model"
	}
	return fmt.Sprintf("layout %s, %d channel%s (%s), %s; not inferred from the model: %s",
		layout, in.Channels, map[bool]string{true: "", false: "s"}[in.Channels == 1], kind, size, strings.Join(d.NotInferred, ", "))
}

// SUTYAML returns the configuration's sut section for the model at path:
// the inferred keys with their values, the others with their defaults and
// a comment saying what else they may be. A model that leaves its size
// open gets input_size 224, commented to be set.
func (d DetectedSUT) SUTYAML(path string) string {
	in := d.Input
	var b strings.Builder
	fmt.Fprintf(&b, "sut:\n  model: %s\n", yamlString(path))
	line := func(kv, comment string) { fmt.Fprintf(&b, "  %-34s # %s\n", kv, comment) }
	shape := dimsWords(d.Shape)
	switch {
	case in.Width > 0 && in.Height > 0 && in.Width == in.Height:
		line(fmt.Sprintf("input_size: %d", in.Width), "from the model's input "+shape)
	case in.Width > 0 && in.Height > 0:
		line(fmt.Sprintf("input_size: [%d, %d]", in.Width, in.Height), "from the model's input "+shape+" (width, height)")
	default:
		line("input_size: 224", "NOT inferred: the model's input "+shape+" leaves it open; set it")
	}
	if in.LayoutKnown {
		line("layout: "+in.Layout.String(), "from the model's input "+shape)
	} else {
		line("layout: "+in.Layout.String(), "NOT inferred: "+shape+" allows nchw and nhwc")
	}
	nc := 3
	if in.Channels == 1 {
		nc = 1
		line("channel_order: rgb", "a grey model: fed the luma")
	} else {
		line("channel_order: rgb", "NOT inferred: bgr for Caffe/OpenCV-trained models")
	}
	line("scale: unit", "NOT inferred: unit [0, 1], pixel [0, 255], symmetric [-1, 1]")
	mean, std := []float64{0.485, 0.456, 0.406}, []float64{0.229, 0.224, 0.225}
	line("mean: "+floats(mean[:nc]), "NOT inferred: as the model was trained (R, G, B, in sut.scale's units)")
	line("std: "+floats(std[:nc]), "NOT inferred")
	return b.String()
}

// dimsWords writes a shape with ? for a dynamic dimension: [? 32 32 3].
func dimsWords(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		if d <= 0 {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(d)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// yamlString quotes s for YAML when it is not a plain scalar.
func yamlString(s string) string {
	if s == "" || strings.ContainsAny(s, ":#{}[],&*!|>'\"%@`\n\t") || strings.TrimSpace(s) != s || strings.HasPrefix(s, "-") || strings.HasPrefix(s, "?") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
