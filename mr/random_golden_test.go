package mr

import (
	"encoding/binary"
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

// TestRandomCorruptionGoldens replays the reference's draws (recorded by
// make_goldens.py) through the random corruptions: the first 2 CIFAR
// images and the 48×48 crop at severities 1–5 must match the reference's
// outputs within 1 level on at least 99.9 % of the values, and consume the
// tape exactly.
func TestRandomCorruptionGoldens(t *testing.T) {
	cifar, mid, _ := corruptionSources(t)
	for _, tc := range []struct {
		name  string
		apply func(s int, src rgb.Image, d draws) rgb.Image
	}{
		{"glass_blur", func(s int, src rgb.Image, d draws) rgb.Image { return GlassBlur{s}.apply(src, d) }},
		{"fog", func(s int, src rgb.Image, d draws) rgb.Image { return Fog{s}.apply(src, d) }},
		{"elastic_transform", func(s int, src rgb.Image, d draws) rgb.Image { return ElasticTransform{s}.apply(src, d) }},
		{"motion_blur", func(s int, src rgb.Image, d draws) rgb.Image { return MotionBlur{s}.apply(src, d) }},
		{"snow", func(s int, src rgb.Image, d draws) rgb.Image { return Snow{s}.apply(src, d) }},
		{"spatter", func(s int, src rgb.Image, d draws) rgb.Image { return Spatter{s}.apply(src, d) }},
	} {
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
