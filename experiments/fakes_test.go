package experiments

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
	"github.com/amt-dev/amt/sut"
)

// fakeSource yields n small seeded random images labelled i%3.
type fakeSource struct{ imgs []rgb.Image }

func newFakeSource(n int) *fakeSource {
	rng := rand.New(rand.NewPCG(42, 0))
	s := &fakeSource{}
	for i := 0; i < n; i++ {
		img := rgb.Image{W: 4, H: 4, Pix: make([]uint8, 48)}
		for k := range img.Pix {
			img.Pix[k] = uint8(rng.IntN(256))
		}
		s.imgs = append(s.imgs, img)
	}
	return s
}

func (s *fakeSource) Len() int { return len(s.imgs) }
func (s *fakeSource) Image(i int) (rgb.Image, int, error) {
	if i < 0 || i >= len(s.imgs) {
		return rgb.Image{}, 0, fmt.Errorf("index %d", i)
	}
	return s.imgs[i], i % 3, nil
}

// fakeRelation adds a key-dependent offset to every pixel.
type fakeRelation struct{ off uint8 }

func (r fakeRelation) Apply(src rgb.Image) rgb.Image {
	out := rgb.Image{W: src.W, H: src.H, Pix: make([]uint8, len(src.Pix))}
	for k, v := range src.Pix {
		out.Pix[k] = v + r.off*uint8(k%3+1)
	}
	return out
}

func fakeRelations(sc scenario.Scenario) map[string]relation {
	m := map[string]relation{}
	for _, v := range sc.Variants() {
		h := fnv.New32a()
		h.Write([]byte(v.Key()))
		m[v.Key()] = fakeRelation{off: uint8(h.Sum32())}
	}
	return m
}

// newFakeOnlineEnv returns the online env of the fake classifier over n
// fake images with the fake relations of sc.
func newFakeOnlineEnv(t *testing.T, n int, sc scenario.Scenario) *onlineEnv {
	t.Helper()
	env, err := newOnlineEnv(newFakeSource(n), fakeExtractor{}, 0, fakeClassifier{}, fakeRelations(sc), sc)
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// fakeClassifier: class = (sum of pixels / 7) mod 3; counts calls.
type fakeClassifier struct {
	calls *atomic.Int64
	// after, when > 0, calls stop() once calls reaches it.
	after int64
	stop  func()
}

// Its logits are 2 for the class and (s mod 11)/10, (s mod 13)/10 for
// the others, s the pixel sum.
func (c fakeClassifier) Classify(imgs []rgb.Image) ([]sut.Prediction, error) {
	if c.calls != nil {
		if n := c.calls.Add(1); c.after > 0 && n == c.after {
			c.stop()
		}
	}
	out := make([]sut.Prediction, len(imgs))
	for i, im := range imgs {
		s := 0
		for _, v := range im.Pix {
			s += int(v)
		}
		class := (s / 7) % 3
		logits := []float32{float32(s%11) / 10, float32(s%13) / 10, float32(s%11) / 10}
		logits[class] = 2
		out[i] = sut.Prediction{Class: class, Logits: logits}
	}
	return out, nil
}

// fakeStudy is the classification case study over src with classifiers
// from newClassifier.
func fakeStudy(src source, newClassifier func() (classifier, error)) caseStudy {
	return &classificationStudy{src: src, newClassifier: newClassifier}
}

// fakeExtractor: 3 features, the mean of each channel in [0,1].
type fakeExtractor struct{}

func (fakeExtractor) Dim() int { return 3 }
func (fakeExtractor) Extract(imgs []rgb.Image) ([][]float32, error) {
	out := make([][]float32, len(imgs))
	for i, im := range imgs {
		f := make([]float32, 3)
		for k, v := range im.Pix {
			f[k%3] += float32(v) / 255
		}
		for c := range f {
			f[c] /= float32(im.W * im.H)
		}
		out[i] = f
	}
	return out, nil
}

// fakeAgent is a tiny learning agent: it chooses arm a with probability
// proportional to 1 + violations(a) + 0.5*ctx[0], and the parameter
// uniformly; its choices depend on the rng, the context and every update,
// so any divergence between two environments shows up in the trace.
type fakeAgent struct {
	sc   scenario.Scenario
	viol []float64
}

func newFakeAgent(sc scenario.Scenario) *fakeAgent {
	return &fakeAgent{sc: sc, viol: make([]float64, len(sc.Arms))}
}

func (a *fakeAgent) Choose(ctx []float32, rng *rand.Rand) (Choice, error) {
	w := make([]float64, len(a.viol))
	sum := 0.0
	for i, v := range a.viol {
		w[i] = 1 + v
		if len(ctx) > 0 {
			w[i] += 0.5 * float64(ctx[0])
		}
		sum += w[i]
	}
	u := rng.Float64() * sum
	arm := len(w) - 1
	for i := range w {
		if u < w[i] {
			arm = i
			break
		}
		u -= w[i]
	}
	p := -1
	if a.sc.Arms[arm].Hierarchical() {
		p = rng.IntN(len(a.sc.Arms[arm].Values))
	}
	return Choice{Arm: arm, Param: p}, nil
}

func (a *fakeAgent) Update(_ []float32, c Choice, violated bool) error {
	if violated {
		a.viol[c.Arm]++
	}
	return nil
}
