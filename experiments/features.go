package experiments

import (
	"github.com/amt-dev/amt/features"
	"github.com/amt-dev/amt/rgb"
)

// constExtractor is the context of experiments without features: a single
// constant 1 per image (the bandits need at least one dimension; with only
// the constant they learn context-free arm values).
type constExtractor struct{}

func (constExtractor) Dim() int { return 1 }

func (constExtractor) Extract(imgs []rgb.Image) ([][]float32, error) {
	out := make([][]float32, len(imgs))
	for i := range out {
		out[i] = []float32{1}
	}
	return out, nil
}

// newExtractorFactory returns a constructor of the configured feature
// extractor (one per goroutine); it builds one right away so that a bad
// model fails before any long work.
func newExtractorFactory(cfg *Config) (func() (extractor, error), error) {
	switch cfg.Features.Kind {
	case "none":
		return func() (extractor, error) { return constExtractor{}, nil }, nil
	case "phash":
		return func() (extractor, error) { return features.PHash{}, nil }, nil
	case "model":
		m, err := features.LoadModel(cfg.Features.Model, features.ModelOptions{})
		if err != nil {
			return nil, cfg.errAt("features.model", "%w", err)
		}
		return func() (extractor, error) { return m.Clone(), nil }, nil
	}
	return nil, cfg.errAt("features.kind", "unknown kind %q", cfg.Features.Kind)
}
