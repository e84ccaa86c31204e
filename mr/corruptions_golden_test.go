package mr

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// corruptionDir holds the corruptions' goldens and make_goldens.py, the
// script that made them (a re-statement of the reference's formulas in
// numpy/scipy/Pillow; see its docstring).
const corruptionDir = "testdata/corruptions"

// corruptionSources returns the golden sources: the 4 CIFAR images, the
// central 48×48 of the 224×224 COCO image, and the 224×224 image.
func corruptionSources(t *testing.T) (cifar []rgb.Image, mid, big rgb.Image) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(corruptionDir, "src_cifar4.u8"))
	if err != nil {
		t.Fatal(err)
	}
	const sz = 32 * 32 * 3
	if len(raw) != 4*sz {
		t.Fatalf("src_cifar4.u8 has %d bytes, want %d", len(raw), 4*sz)
	}
	for i := 0; i < 4; i++ {
		cifar = append(cifar, rgb.Image{W: 32, H: 32, Pix: raw[i*sz : (i+1)*sz]})
	}
	big = goldentest.ReadPNG(t, filepath.Join(corruptionDir, "src_224.png"))
	mid = rgb.New(48, 48)
	for y := 0; y < 48; y++ {
		copy(mid.Pix[y*48*3:(y+1)*48*3], big.Pix[((88+y)*224+88)*3:][:48*3])
	}
	return cifar, mid, big
}

// match counts the values of got that differ from want, those that do by
// more than tol levels, and the largest difference.
type match struct {
	n, over, maxDiff int
	differ           int // values not equal
}

func (m *match) add(got, want []uint8, tol int) {
	for i, g := range got {
		d := int(g) - int(want[i])
		d = max(d, -d)
		m.n++
		if d != 0 {
			m.differ++
		}
		if d > tol {
			m.over++
		}
		m.maxDiff = max(m.maxDiff, d)
	}
}

func (m match) frac() float64 { return float64(m.over) / float64(max(m.n, 1)) }

// TestCorruptionGoldens compares the deterministic corruptions with the
// goldens of make_goldens.py: the 4 CIFAR images at severities 1–5
// (CIFAR-10-C constants), the 48×48 crop at 1–5 and the 224×224 image at
// 1 and 5 (ImageNet-C constants; not for the per-pixel colour maps
// brightness_c and saturate). At least 99.9 % of the values must be
// within 1 level (the reference truncates to uint8, so values a rounding
// error away from a whole level may fall either side). jpeg_compression
// (Pillow's own output) is also checked on a 37×29 crop, for the block
// padding and chroma edges of odd sizes.
func TestCorruptionGoldens(t *testing.T) {
	cifar, mid, big := corruptionSources(t)
	for _, tc := range []struct {
		name    string
		tol     int     // levels
		maxFrac float64 // of values beyond tol
	}{
		{"defocus_blur", 1, 0.001},
		{"zoom_blur", 1, 0.001},
		{"brightness_c", 1, 0.001},
		{"contrast", 1, 0.001},
		{"pixelate", 1, 0.001},
		{"gaussian_blur", 1, 0.001},
		{"saturate", 1, 0.001},
		{"jpeg_compression", 1, 0.001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sets := []struct {
				file string
				srcs []rgb.Image
				sevs []int
			}{
				{"cifar", cifar, []int{1, 2, 3, 4, 5}},
				{"48", []rgb.Image{mid}, []int{1, 2, 3, 4, 5}},
				{"224", []rgb.Image{big}, []int{1, 5}},
			}
			if tc.name == "jpeg_compression" {
				odd := rgb.New(37, 29)
				for y := 0; y < 29; y++ {
					copy(odd.Pix[y*37*3:(y+1)*37*3], big.Pix[((50+y)*224+60)*3:][:37*3])
				}
				sets = append(sets, struct {
					file string
					srcs []rgb.Image
					sevs []int
				}{"odd", []rgb.Image{odd}, []int{1, 2, 3, 4, 5}})
			}
			if tc.name == "brightness_c" || tc.name == "saturate" {
				sets = sets[:2] // per-pixel maps: no 224×224 golden (make_goldens.py)
			}
			for _, set := range sets {
				want := goldentest.ReadPNG(t, filepath.Join(corruptionDir, tc.name+"_"+set.file+".png"))
				off := 0
				var all match
				for _, s := range set.sevs {
					r, err := New(tc.name, float64(s))
					if err != nil {
						t.Fatal(err)
					}
					var m match
					for _, src := range set.srcs {
						n := len(src.Pix)
						if off+n > len(want.Pix) {
							t.Fatalf("%s golden too short", set.file)
						}
						got := r.Apply(src)
						m.add(got.Pix, want.Pix[off:off+n], tc.tol)
						all.add(got.Pix, want.Pix[off:off+n], tc.tol)
						off += n
					}
					t.Logf("%s %s: %.4f%% of %d values beyond %d level(s), max diff %d", r.Name(), set.file, 100*m.frac(), m.n, tc.tol, m.maxDiff)
				}
				if off != len(want.Pix) {
					t.Fatalf("%s golden has %d values, used %d", set.file, len(want.Pix), off)
				}
				if all.frac() > tc.maxFrac {
					t.Errorf("%s %s: %.4f%% of values beyond %d level(s), want ≤ %.2f%%", tc.name, set.file, 100*all.frac(), tc.tol, 100*tc.maxFrac)
				}
			}
		})
	}
}
