package preprocess

import "fmt"

// InputShape is what a classifier's ONNX input shape says about its input
// convention (DetectInput).
type InputShape struct {
	// Layout is the layout the shape implies; LayoutKnown says whether it
	// is unambiguous (else Layout is NCHW, the default).
	Layout      Layout
	LayoutKnown bool
	// Channels is 1 (grey) or 3 (colour), in the layout's channel axis.
	Channels int
	// Height and Width are the fixed input size, 0 where the model leaves
	// them dynamic.
	Height, Width int
}

// isChannels reports whether a dimension can be an image's channel count.
func isChannels(d int) bool { return d == 1 || d == 3 }

// DetectInput reads the layout, the channels and the size of a
// classifier's input from its ONNX shape s (negative or 0 = dynamic). The
// rule: a rank-4 shape whose axis 1 is 1 or 3 and whose axis 3 is not is
// NCHW ([N, 3, 224, 224], [N, 1, 28, 28]); one whose axis 3 is 1 or 3 and
// whose axis 1 is not is NHWC ([N, 224, 224, 3]); when both are (a 3×3
// image, [N, 3, H, 3]) the layout is not known and NCHW is assumed. Any
// other shape is an error saying what is wanted.
func DetectInput(s []int) (InputShape, error) {
	if len(s) != 4 {
		return InputShape{}, fmt.Errorf("input shape %v: want an image input of rank 4, [N, C, H, W] (nchw) or [N, H, W, C] (nhwc) with C = 1 or 3", s)
	}
	first, last := isChannels(s[1]), isChannels(s[3])
	pos := func(d int) int { return max(d, 0) }
	switch {
	case first && !last:
		return InputShape{Layout: NCHW, LayoutKnown: true, Channels: s[1], Height: pos(s[2]), Width: pos(s[3])}, nil
	case last && !first:
		return InputShape{Layout: NHWC, LayoutKnown: true, Channels: s[3], Height: pos(s[1]), Width: pos(s[2])}, nil
	case first && last:
		return InputShape{Layout: NCHW, Channels: s[1], Height: pos(s[2]), Width: pos(s[3])}, nil
	}
	return InputShape{}, fmt.Errorf("input shape %v: want [N, C, H, W] (nchw) or [N, H, W, C] (nhwc) with C = 1 (grey) or 3 (colour)", s)
}

// inLayout returns the input as the model reads it in layout l: the channels
// and the size on l's axes of shape s (which must have rank 4), and
// whether its channel axis holds 1 or 3.
func inLayout(s []int, l Layout) (in InputShape, ok bool) {
	pos := func(d int) int { return max(d, 0) }
	if l == NHWC {
		return InputShape{Layout: l, LayoutKnown: true, Channels: s[3], Height: pos(s[1]), Width: pos(s[2])}, isChannels(s[3])
	}
	return InputShape{Layout: l, LayoutKnown: true, Channels: s[1], Height: pos(s[2]), Width: pos(s[3])}, isChannels(s[1])
}

// ResolveInput checks a configured layout against the model's input shape
// s and returns the input in that layout; auto takes the detected one
// (DetectInput). A layout the shape contradicts is an error naming the
// layout expected: an NHWC model [1, 32, 32, 3] configured as nchw, say.
func ResolveInput(s []int, l Layout, auto bool) (InputShape, error) {
	d, err := DetectInput(s)
	if err != nil {
		return d, err
	}
	if auto {
		return d, nil
	}
	in, ok := inLayout(s, l)
	if !ok || (d.LayoutKnown && d.Layout != l) {
		return in, fmt.Errorf("layout %s, but the model's input %v is %s (channels %s); want layout %s", l, s, d.Layout, axisWords(d.Layout), d.Layout)
	}
	return in, nil
}

func axisWords(l Layout) string {
	if l == NHWC {
		return "last"
	}
	return "first"
}
