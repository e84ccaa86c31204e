package experiments

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/amt-dev/amt/features"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/nn"
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
// extractor (one per goroutine) and its device's part of the cache key
// (see deviceKey), a nil factory when the context is the grey-box block
// alone; it builds one right away so that a bad model fails before any
// long work.
func newExtractorFactory(cfg *Config) (func() (extractor, error), string, error) {
	kind := cfg.Features.extractor()
	switch kind {
	case "":
		return nil, "", nil
	case "none":
		return func() (extractor, error) { return constExtractor{}, nil }, "", nil
	case "phash":
		return func() (extractor, error) { return features.PHash{}, nil }, "", nil
	case "model":
		opt, _, err := featureOptions(cfg.Features)
		if err != nil {
			return nil, "", cfg.errAt("features", "%w", err)
		}
		opt.Output, opt.Load = cfg.Features.Output, nn.LoadOptions{Device: cfg.Features.Device, Logf: cfg.Logf}
		m, err := features.LoadModel(cfg.Features.Model, opt)
		var unknown *nn.UnknownTensorError
		if errors.As(err, &unknown) {
			names := make([]string, len(unknown.Tensors))
			list := make([]string, len(unknown.Tensors))
			for i, t := range unknown.Tensors {
				names[i] = t.Name
				list[i] = fmt.Sprintf("%s %v", t.Name, t.Shape)
			}
			return nil, "", cfg.errAt("features.output", "%s computes no tensor %q%s; its %d tensors (name [shape], -1 = any batch): %s",
				filepath.Base(cfg.Features.Model), unknown.Name, suggest.DidYouMean(unknown.Name, names), len(list), strings.Join(list, ", "))
		}
		if err != nil {
			key := "features.model"
			if cfg.Features.Output != "" {
				key = "features.output"
			}
			return nil, "", cfg.errAt(key, "%w", err)
		}
		return func() (extractor, error) { return m.Clone(), nil }, deviceKey(m), nil
	}
	return nil, "", cfg.errAt("features.kind", "unknown kind %q", kind)
}
