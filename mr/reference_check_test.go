package mr

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// TestCorruptionReference measures the corruptions against the reference
// implementation itself, run by testdata/corruptions/check_reference.py
// with the real libraries (scikit-image, OpenCV, ImageMagick through wand,
// Pillow) from a checkout of hendrycks/robustness; it is skipped unless
// AMT_CORRUPTION_REFERENCE names the folder that script wrote. Per
// corruption it holds NAME.u8, the reference's outputs for severities 1–5
// (each the 4 CIFAR sources through make_cifar_c.py's function, then the
// 224×224 source through imagenet_c's), and for the random ones
// NAME_tape.f64, the reference's draws in order (float64), which are
// replayed here. It logs, per severity and size, the share of values more
// than 1 level off and the largest difference, and fails where more than
// 0.1 % are.
func TestCorruptionReference(t *testing.T) {
	dir := os.Getenv("AMT_CORRUPTION_REFERENCE")
	if dir == "" {
		t.Skip("AMT_CORRUPTION_REFERENCE not set (see testdata/corruptions/check_reference.py)")
	}
	cifar, _, big := corruptionSources(t)
	srcs := append(append([]rgb.Image(nil), cifar...), big)
	replay := map[string]func(int, rgb.Image, draws) rgb.Image{}
	for _, r := range replayers {
		replay[r.name] = r.apply
	}
	for _, in := range corruptionEntries() {
		raw, err := os.ReadFile(filepath.Join(dir, in.Name+".u8"))
		if err != nil {
			continue // not produced (the noises: see TestNoiseDistributions)
		}
		t.Run(in.Name, func(t *testing.T) {
			var tp *tape
			if _, ok := replay[in.Name]; ok {
				b, err := os.ReadFile(filepath.Join(dir, in.Name+"_tape.f64"))
				if err != nil {
					t.Fatal(err)
				}
				tp = &tape{t: t}
				for i := 0; i+8 <= len(b); i += 8 {
					tp.vals = append(tp.vals, math.Float64frombits(binary.LittleEndian.Uint64(b[i:])))
				}
			}
			off := 0
			var worst match
			for s := 1; s <= 5; s++ {
				var mc, mb match
				for i, src := range srcs {
					n := len(src.Pix)
					if off+n > len(raw) {
						t.Fatalf("%s.u8 too short", in.Name)
					}
					var got rgb.Image
					if tp != nil {
						got = replay[in.Name](s, src, tp)
					} else {
						r, _ := New(in.Name, float64(s))
						got = r.Apply(src)
					}
					if i < len(cifar) {
						mc.add(got.Pix, raw[off:off+n], 1)
					} else {
						mb.add(got.Pix, raw[off:off+n], 1)
					}
					worst.add(got.Pix, raw[off:off+n], 1)
					off += n
				}
				t.Logf("%s:%d: 32x32 %.4f%% differ, %.4f%% beyond 1 level (max %d); 224x224 %.4f%%, %.4f%% (max %d)", in.Name, s,
					100*float64(mc.differ)/float64(mc.n), 100*mc.frac(), mc.maxDiff, 100*float64(mb.differ)/float64(mb.n), 100*mb.frac(), mb.maxDiff)
			}
			if tp != nil && tp.next != len(tp.vals) {
				t.Errorf("used %d of the reference's %d draws", tp.next, len(tp.vals))
			}
			if worst.frac() > 0.001 {
				t.Errorf("%.4f%% of values beyond 1 level", 100*worst.frac())
			}
		})
	}
}
