package mr

import (
	"strings"

	"github.com/amt-dev/amt/rgb"
)

// Compose is a sequence of relations applied in order (first element
// first). It is itself a relation; its name is the comma-separated names of
// its parts, which Parse turns back into the same composition. An empty
// Compose is the identity and is named "".
type Compose []Relation

// Name implements Relation.
func (c Compose) Name() string {
	names := make([]string, len(c))
	for i, r := range c {
		names[i] = r.Name()
	}
	return strings.Join(names, ",")
}

// Apply implements Relation.
func (c Compose) Apply(src rgb.Image) rgb.Image {
	mustValid("compose", src)
	if len(c) == 0 {
		return src.Clone()
	}
	img := src
	for _, r := range c {
		img = r.Apply(img)
	}
	return img
}

// ApplyBoxes implements Relation. Every relation keeps the image size, so
// each step sees the same w×h.
func (c Compose) ApplyBoxes(boxes []rgb.Box, w, h int) []rgb.Box {
	out := append([]rgb.Box(nil), boxes...)
	if out == nil {
		out = []rgb.Box{}
	}
	for _, r := range c {
		out = r.ApplyBoxes(out, w, h)
	}
	return out
}
