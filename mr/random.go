package mr

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"

	"github.com/amt-dev/amt/rgb"
)

// Random is a relation whose follow-up is drawn at random (the noise,
// glass blur, fog, elastic, snow, spatter and motion-blur corruptions).
// ApplyRand draws everything from rng, which the caller owns, so the same
// generator state gives the same bytes.
//
// A Random relation is still a Relation: its Apply is ApplySeed with seed
// 0, a pure function of the image, so callers that know nothing of seeds
// (amt transform, the experiments) get the same follow-up every time.
type Random interface {
	Relation
	ApplyRand(src rgb.Image, rng *rand.Rand) rgb.Image
}

// Rand returns the generator of relation r's draws for image src under
// seed: PCG with seed as its first word and, as its second (the stream),
// the 64-bit FNV-1a hash of r's name (which holds the severity:
// "gaussian_noise:3"), a zero byte, the image's width and height (8 bytes
// each, little-endian) and its pixels. The draws thus depend on (seed,
// image, relation, severity) and on nothing else: not on the order in
// which images or relations are visited, nor on other goroutines.
func Rand(seed uint64, src rgb.Image, r Relation) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(r.Name()))
	var b [17]byte
	binary.LittleEndian.PutUint64(b[1:], uint64(src.W))
	binary.LittleEndian.PutUint64(b[9:], uint64(src.H))
	h.Write(b[:])
	h.Write(src.Pix)
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// ApplySeed applies r to src under seed: a Random relation draws from
// Rand(seed, src, r), a Compose applies each part under seed in turn (each
// random part keyed by the image it receives), and any other relation is
// r.Apply(src).
func ApplySeed(r Relation, src rgb.Image, seed uint64) rgb.Image {
	switch r := r.(type) {
	case Random:
		return r.ApplyRand(src, Rand(seed, src, r))
	case Compose:
		mustValid("compose", src)
		if len(r) == 0 {
			return src.Clone()
		}
		img := src
		for _, p := range r {
			img = ApplySeed(p, img, seed)
		}
		return img
	}
	return r.Apply(src)
}

// draws is where a random corruption takes its random numbers, in the
// order the reference draws them from numpy: from the caller's generator
// in ApplyRand (rngDraws), from a recording of numpy's draws in the golden
// tests. The reference's np.random.normal(loc, scale) is loc +
// scale·Normal(), uniform(low, high) is low + (high − low)·Uniform(), and
// randint(low, high) is low + IntN(high − low).
type draws interface {
	Normal() float64  // standard normal
	Uniform() float64 // uniform in [0, 1)
	IntN(n int) int   // uniform in [0, n)
}

// rngDraws are the draws of a generator.
type rngDraws struct{ r *rand.Rand }

func (d rngDraws) Normal() float64  { return d.r.NormFloat64() }
func (d rngDraws) Uniform() float64 { return d.r.Float64() }
func (d rngDraws) IntN(n int) int   { return d.r.IntN(n) }

// normals returns n draws of N(mu, sd²), np.random.normal(mu, sd, n):
// mu + sd·Normal() each.
func normals(n int, mu, sd float64, d draws) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu + sd*d.Normal()
	}
	return out
}
