package experiments

import (
	"fmt"
	"slices"

	"github.com/amt-dev/amt/features"
	"github.com/amt-dev/amt/nn/preprocess"
)

// The feature model's input convention (features.channel_order,
// features.scale, features.mean, features.std): the sut keys' meaning
// (convention.go) for the context's feature model. Its layout is read
// from its input shape (features.NewModel). The defaults are what the
// default feature model expects and what every feature model got before
// the keys existed, so the feature caches of existing configurations keep
// their keys.

const (
	featureMeanDefDoc = "ImageNet's [0.485, 0.456, 0.406] with features.scale unit, else [0, 0, 0]"
	featureStdDefDoc  = "ImageNet's [0.229, 0.224, 0.225] with features.scale unit, else [1, 1, 1]"
)

// hasFeatureModel reports whether the context has a feature model.
func hasFeatureModel(c *Config) bool { return slices.Contains(c.Features.Kinds, "model") }

// defaultFeatureMean sets features.mean's default, which depends on
// features.scale.
func defaultFeatureMean(c *Config) { c.Features.Mean = scaleMean(c.Features.Scale) }

// defaultFeatureStd sets features.std's default, which depends on
// features.scale.
func defaultFeatureStd(c *Config) { c.Features.Std = scaleStd(c.Features.Scale) }

// featureOptions returns the feature model's options for its convention,
// and the convention's part of the feature cache key: "" for the default
// convention (the key as before the keys existed), else its words.
func featureOptions(f FeaturesConfig) (features.ModelOptions, string, error) {
	var o features.ModelOptions
	if f.ChannelOrder == "" && f.Scale == "" && f.Mean == ([3]float64{}) && f.Std == ([3]float64{}) {
		return o, "", nil // a configuration made in code, without the keys
	}
	bgr, err := preprocess.ParseChannelOrder(f.ChannelOrder)
	if err != nil {
		return o, "", err
	}
	sc, err := preprocess.ParseScale(f.Scale)
	if err != nil {
		return o, "", err
	}
	n := preprocess.Norm{Scale: sc}
	for i := range 3 {
		n.Mean[i], n.Std[i] = float32(f.Mean[i]), float32(f.Std[i])
	}
	o.Norm, o.BGR = &n, bgr
	if !bgr && sc == preprocess.ScaleUnit && n == preprocess.ImageNet() {
		return o, "", nil
	}
	return o, fmt.Sprintf("channel_order %s, scale %s, mean %s, std %s", preprocess.ChannelOrder(bgr), sc, floats(f.Mean[:]), floats(f.Std[:])), nil
}
