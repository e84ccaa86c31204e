package sut

import (
	"fmt"

	"github.com/amt-dev/amt/nn/preprocess"
)

// Convention returns the input convention of c in the words of the
// configuration keys: "layout nchw, channel_order rgb, scale unit".
func (c ClassifierConfig) Convention() string {
	return fmt.Sprintf("layout %s, channel_order %s, scale %s", c.Layout, preprocess.ChannelOrder(c.BGR), c.Scale)
}

// DefaultConvention reports whether c's layout, channel order and scale
// are the defaults (NCHW, RGB, unit): the convention of every classifier
// before conventions were configurable.
func (c ClassifierConfig) DefaultConvention() bool {
	return c.Layout == preprocess.NCHW && !c.BGR && c.Scale == preprocess.ScaleUnit
}
