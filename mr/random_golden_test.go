package mr

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// tape replays numpy's recorded draws (make_goldens.py's Tape): every
// draw, whatever its kind, is the next value.
type tape struct {
	t    *testing.T
	vals []float64
	next int
}

func (p *tape) take() float64 {
	if p.next >= len(p.vals) {
		p.t.Fatalf("tape exhausted after %d draws", p.next)
	}
	v := p.vals[p.next]
	p.next++
	return v
}

func (p *tape) Normal() float64  { return p.take() }
func (p *tape) Uniform() float64 { return p.take() }
func (p *tape) IntN(n int) int {
	v := p.take()
	if v < 0 || v >= float64(n) || v != math.Trunc(v) {
		p.t.Fatalf("tape draw %d is %v, not an integer in [0, %d)", p.next-1, v, n)
	}
	return int(v)
}

// readTape reads NAME_tape.f32 (float32 little-endian) or NAME_tape.i8.
func readTape(t *testing.T, name string) *tape {
	t.Helper()
	p := &tape{t: t}
	if raw, err := os.ReadFile(filepath.Join(corruptionDir, name+"_tape.i8")); err == nil {
		for _, b := range raw {
			p.vals = append(p.vals, float64(int8(b)))
		}
		return p
	}
	raw, err := os.ReadFile(filepath.Join(corruptionDir, name+"_tape.f32"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+4 <= len(raw); i += 4 {
		p.vals = append(p.vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
	}
	return p
}

// replayers are the random corruptions that take their draws from a
// draws value (the noises draw from the generator directly and are
// checked by their distributions instead).
var replayers = []struct {
	name  string
	apply func(s int, src rgb.Image, d draws) rgb.Image
}{
	{"glass_blur", func(s int, src rgb.Image, d draws) rgb.Image { return GlassBlur{s}.apply(src, d) }},
	{"fog", func(s int, src rgb.Image, d draws) rgb.Image { return Fog{s}.apply(src, d) }},
	{"elastic_transform", func(s int, src rgb.Image, d draws) rgb.Image { return ElasticTransform{s}.apply(src, d) }},
	{"motion_blur", func(s int, src rgb.Image, d draws) rgb.Image { return MotionBlur{s}.apply(src, d) }},
	{"snow", func(s int, src rgb.Image, d draws) rgb.Image { return Snow{s}.apply(src, d) }},
	{"spatter", func(s int, src rgb.Image, d draws) rgb.Image { return Spatter{s}.apply(src, d) }},
}

// TestRandomCorruptionGoldens replays the reference's draws (recorded by
// make_goldens.py) through the random corruptions: the first 2 CIFAR
// images and the 48×48 crop at severities 1–5 must match the reference's
// outputs within 1 level on at least 99.9 % of the values, and consume the
// tape exactly.
func TestRandomCorruptionGoldens(t *testing.T) {
	cifar, mid, _ := corruptionSources(t)
	for _, tc := range replayers {
		t.Run(tc.name, func(t *testing.T) {
			tp := readTape(t, tc.name)
			for _, set := range []struct {
				file string
				srcs []rgb.Image
			}{{"cifar", cifar[:2]}, {"48", []rgb.Image{mid}}} {
				want := goldentest.ReadPNG(t, filepath.Join(corruptionDir, tc.name+"_"+set.file+".png"))
				off := 0
				var all match
				for s := 1; s <= 5; s++ {
					var m match
					for _, src := range set.srcs {
						n := len(src.Pix)
						got := tc.apply(s, src, tp)
						m.add(got.Pix, want.Pix[off:off+n], 1)
						all.add(got.Pix, want.Pix[off:off+n], 1)
						off += n
					}
					t.Logf("%s:%d %s: %.4f%% of %d values beyond 1 level, max diff %d", tc.name, s, set.file, 100*m.frac(), m.n, m.maxDiff)
				}
				if off != len(want.Pix) {
					t.Fatalf("%s golden has %d values, used %d", set.file, len(want.Pix), off)
				}
				if all.frac() > 0.001 {
					t.Errorf("%s %s: %.4f%% of values beyond 1 level, want ≤ 0.1%%", tc.name, set.file, 100*all.frac())
				}
			}
			if tp.next != len(tp.vals) {
				t.Errorf("used %d of the tape's %d draws", tp.next, len(tp.vals))
			}
		})
	}
}

// The random corruptions other than the noises are exact given numpy's
// draws (TestRandomCorruptionGoldens); what ApplyRand adds is rngDraws,
// whose draws must have the distributions of numpy's: uniform on [0, 1)
// (mean 1/2, variance 1/12), standard normal (0, 1) and integers uniform
// on [0, n) (mean (n−1)/2, variance (n²−1)/12). 200000 draws each, within
// 5 standard errors (the variance's from the fourth moment: 1/80 for the
// uniform, 2 for the normal, (n²−1)(3n²−7)/240 − ((n²−1)/12)² for IntN).
func TestDrawDistributions(t *testing.T) {
	d := rngDraws{Rand(1, rgb.New(1, 1), GlassBlur{1})}
	const n = 200000
	check := func(what string, draw func() float64, mean, variance, m4 float64) {
		var s, s2 float64
		for i := 0; i < n; i++ {
			v := draw()
			s += v
			s2 += v * v
		}
		m := s / n
		v := s2/n - m*m
		// The variance's tolerance adds the bias of the estimated mean,
		// (m − mean)² ≤ 25σ²/n at 5 standard errors (all of it for IntN(2),
		// whose sample variance has no other spread).
		if math.Abs(m-mean) > 5*math.Sqrt(variance/n) || math.Abs(v-variance) > 5*math.Sqrt((m4-variance*variance)/n)+25*variance/n {
			t.Errorf("%s: mean %v variance %v, want %v %v", what, m, v, mean, variance)
		}
	}
	check("Uniform", d.Uniform, 0.5, 1.0/12, 1.0/80)
	check("Normal", d.Normal, 0, 1, 3)
	for _, k := range []int{2, 4, 8} {
		f := float64(k)
		v := (f*f - 1) / 12
		check(fmt.Sprintf("IntN(%d)", k), func() float64 { return float64(d.IntN(k)) }, (f-1)/2, v, (f*f-1)*(3*f*f-7)/240)
	}
}
