// Package features computes the context features a contextual bandit sees
// for each source image: a perceptual hash ([PHash], the paper's
// alternative), the output of an ONNX feature model ([Model], the paper's
// default), or nothing ([None]).
//
// Every extractor works on batches, so that model-based extractors can run
// one forward pass for many images, and returns one row of Dim() float32
// values per image.
package features

import (
	"fmt"

	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/rgb"
)

// Extractor computes context features, one row of Dim() values per image.
// An Extractor need not be safe for concurrent use: give each goroutine
// its own (see each implementation).
type Extractor interface {
	// Dim returns the number of features per image.
	Dim() int
	// Extract returns the features of each image, in order.
	Extract(imgs []rgb.Image) ([][]float32, error)
}

// None is the extractor without features: Dim is 0 and every row is
// empty. A contextual bandit given these rows sees only its own constant
// (bias) feature, so it learns one cost per action for all images: it
// becomes a non-contextual bandit. None is safe for concurrent use.
type None struct{}

// Dim returns 0.
func (None) Dim() int { return 0 }

// Extract returns one empty row per image. It fails only on an invalid
// image, so that None checks its input like the other extractors.
func (None) Extract(imgs []rgb.Image) ([][]float32, error) {
	out := make([][]float32, len(imgs))
	for i, m := range imgs {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("features: image %d: %w", i, err)
		}
		out[i] = []float32{}
	}
	return out, nil
}

// Kinds lists the extractor kinds [New] accepts.
func Kinds() []string { return []string{"model", "phash", "none"} }

// New returns a new extractor of the given kind: "model" (the ONNX feature
// model at modelPath, or the default model when modelPath is empty),
// "phash" or "none". modelPath must be empty for the other kinds.
func New(kind, modelPath string) (Extractor, error) {
	if kind != "model" && modelPath != "" {
		return nil, fmt.Errorf("features: kind %q takes no model (got %s)", kind, modelPath)
	}
	switch kind {
	case "none":
		return None{}, nil
	case "phash":
		return PHash{}, nil
	case "model":
		if modelPath == "" {
			p, err := DefaultModelPath()
			if err != nil {
				return nil, err
			}
			modelPath = p
		}
		return LoadModel(modelPath, ModelOptions{})
	}
	return nil, fmt.Errorf("features: unknown kind %q%s (want model, phash or none)", kind, suggest.DidYouMean(kind, []string{"model", "phash", "none"}))
}
