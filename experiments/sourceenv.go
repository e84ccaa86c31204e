package experiments

import (
	"fmt"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

// A source yields the source cases of an experiment by index.
type source interface {
	Len() int
	// Image returns case i's image and label (-1 when unlabelled).
	Image(i int) (rgb.Image, int, error)
}

// limited is a source restricted to its first n cases.
type limited struct {
	source
	n int
}

func (l limited) Len() int { return l.n }

// A relation is a metamorphic relation's transformation of an image.
type relation interface {
	Apply(src rgb.Image) rgb.Image
}

// An extractor computes context features, one row of Dim values per image.
type extractor interface {
	Dim() int
	Extract(imgs []rgb.Image) ([][]float32, error)
}

// optionalExtractor returns a new extractor from newExt, or nil when
// newExt is nil (a context of the grey-box block alone).
func optionalExtractor(newExt func() (extractor, error)) (extractor, error) {
	if newExt == nil {
		return nil, nil
	}
	return newExt()
}

// sourceEnv is what onlineEnv and detectionEnv share: the data set size,
// the context extractor, the length of the grey-box block, the follow-up
// relations, and which source image is loaded with its context, computed
// at most once.
type sourceEnv struct {
	n      int
	ext    extractor
	sutDim int // 0: no grey-box block
	rel    map[string]relation

	cur   int // the loaded source image, −1 before the first
	feats []float32
}

// newSourceEnv checks that the data set is not empty and that rel has a
// relation for every follow-up of sc, one that check accepts when check is
// not nil.
func newSourceEnv(n int, ext extractor, sutDim int, rel map[string]relation, sc scenario.Scenario, check func(key string, r relation) error) (sourceEnv, error) {
	for _, v := range sc.Variants() {
		r := rel[v.Key()]
		if r == nil {
			return sourceEnv{}, fmt.Errorf("online: no relation for follow-up %s", v.Key())
		}
		if check != nil {
			if err := check(v.Key(), r); err != nil {
				return sourceEnv{}, err
			}
		}
	}
	if n == 0 {
		return sourceEnv{}, fmt.Errorf("online: the data set is empty")
	}
	if sutDim < 0 {
		return sourceEnv{}, fmt.Errorf("online: grey-box block of %d values", sutDim)
	}
	return sourceEnv{n: n, ext: ext, sutDim: sutDim, rel: rel, cur: -1}, nil
}

// Len implements Env.
func (e *sourceEnv) Len() int { return e.n }

// Layout implements Env: the extractor's features, then the grey-box
// block.
func (e *sourceEnv) Layout() bandit.Layout {
	d := e.sutDim
	if e.ext != nil {
		d += e.ext.Dim()
	}
	return bandit.Layout{Dim: d, Grey: e.sutDim}
}

// load makes source image i the loaded one: unless it is already, read
// reads it into the env's own fields, and its context is yet to be
// computed.
func (e *sourceEnv) load(i int, read func(i int) error) error {
	if e.cur == i {
		return nil
	}
	if err := read(i); err != nil {
		return fmt.Errorf("image %d: %w", i, err)
	}
	e.cur, e.feats = i, nil
	return nil
}

// context returns the context of img, the loaded source image: the
// extractor's features, then (with a grey-box block) what sutFeatures
// returns, which must have the block's length.
func (e *sourceEnv) context(img rgb.Image, sutFeatures func() ([]float32, error)) ([]float32, error) {
	if e.feats != nil {
		return e.feats, nil
	}
	f := []float32{}
	if e.ext != nil {
		var err error
		if f, err = featuresOf(e.ext, img, e.cur, e.ext.Dim()); err != nil {
			return nil, err
		}
	}
	if e.sutDim > 0 {
		g, err := sutFeatures()
		if err != nil {
			return nil, fmt.Errorf("image %d: %w", e.cur, err)
		}
		if len(g) != e.sutDim {
			return nil, fmt.Errorf("image %d: the grey-box block has %d values, want %d", e.cur, len(g), e.sutDim)
		}
		f = append(f[:len(f):len(f)], g...)
	}
	e.feats = f
	return f, nil
}

// relation returns the relation of follow-up v.
func (e *sourceEnv) relation(v scenario.Variant) (relation, error) {
	r := e.rel[v.Key()]
	if r == nil {
		return nil, fmt.Errorf("no relation for follow-up %s", v.Key())
	}
	return r, nil
}

// featuresOf extracts the context features of one image (index image in
// the data set), checking that the extractor returned one row of dim values.
func featuresOf(ext extractor, img rgb.Image, image, dim int) ([]float32, error) {
	f, err := ext.Extract([]rgb.Image{img})
	if err != nil {
		return nil, fmt.Errorf("features of image %d: %w", image, err)
	}
	if len(f) != 1 || len(f[0]) != dim {
		return nil, fmt.Errorf("features of image %d: extractor returned %d rows, want 1 of %d values", image, len(f), dim)
	}
	return f[0], nil
}
