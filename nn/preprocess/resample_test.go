package preprocess

import (
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// resizePortable is Resize through the portable loops only.
func resizePortable(src rgb.Image, w, h int) rgb.Image {
	img := src
	if w != img.W {
		c := bilinearCoeffs(img.W, w)
		dst := rgb.New(w, img.H)
		for y := 0; y < img.H; y++ {
			hsumGo(dst.Pix[y*w*3:(y+1)*w*3], img.Pix[y*img.W*3:(y+1)*img.W*3], &c, 0)
		}
		img = dst
	}
	if h != img.H {
		c := bilinearCoeffs(img.H, h)
		dst := rgb.New(img.W, h)
		stride := img.W * 3
		for o := 0; o < h; o++ {
			offs := make([]int, c.n[o])
			for j := range offs {
				offs[j] = (c.start[o] + j) * stride
			}
			vsumGo(dst.Pix[o*stride:(o+1)*stride], img.Pix, offs, c.k[o*c.ksize:o*c.ksize+c.n[o]], 0)
		}
		img = dst
	}
	return img
}

// TestResampleSIMD compares the SIMD resampling loops with the portable
// ones, bit for bit: whole resizes over many size pairs (up and down, to
// and from 1 pixel, widths around the loops' 32-byte and last-pixel
// edges), then the loops alone with arbitrary weights (negative, and large
// enough to saturate at 0 and 255, which the bilinear weights never do).
func TestResampleSIMD(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no SIMD resampling loops in this build (noasm, not amd64, or a CPU without AVX2): only the portable loops run, tested by the golden tests")
	}
	r := rand.New(rand.NewPCG(9, 9))
	sizes := []int{1, 2, 3, 5, 10, 11, 21, 32, 33, 224, 298, 312, 416, 480, 640}
	for i := 0; i < 300; i++ {
		w, h := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
		ow, oh := sizes[r.IntN(len(sizes))], sizes[r.IntN(len(sizes))]
		if i%3 == 0 {
			w, h, ow, oh = 1+r.IntN(100), 1+r.IntN(100), 1+r.IntN(300), 1+r.IntN(300)
		}
		src := goldentest.RandomImage(w, h, uint64(i))
		if got, want := Resize(src, ow, oh), resizePortable(src, ow, oh); !got.Equal(want) {
			t.Fatalf("%dx%d → %dx%d: SIMD and portable resizes differ", w, h, ow, oh)
		}
	}
	for i := 0; i < 200; i++ {
		taps := 1 + r.IntN(4)
		k := make([]int32, taps)
		for j := range k {
			k[j] = int32(r.IntN(1<<23)) - 1<<22 // |Σ 255·k| < 2^31
		}
		// vsum: taps rows of a random image, lengths around 32-byte edges.
		n := 1 + r.IntN(200)
		src := goldentest.RandomImage(n, taps+2, uint64(1000+i)).Pix
		offs := make([]int, taps)
		for j := range offs {
			offs[j] = r.IntN(3) * n * 3
		}
		got, want := make([]uint8, n*3), make([]uint8, n*3)
		vsumGo(got, src, offs, k, vsumSIMD(got, src, offs, k))
		vsumGo(want, src, offs, k, 0)
		if string(got) != string(want) {
			t.Fatalf("vsum case %d (%d taps, %d bytes): SIMD and portable loops differ", i, taps, len(got))
		}
		// hsum: a row of inW pixels to outW with these weights at random
		// starts.
		inW, outW := taps+r.IntN(50), 1+r.IntN(50)
		c := coeffs{start: make([]int, outW), n: make([]int, outW), k: make([]int32, outW*taps), ksize: taps}
		for o := range outW {
			c.n[o] = 1 + r.IntN(taps)
			c.start[o] = r.IntN(inW - c.n[o] + 1)
			copy(c.k[o*taps:], k[:c.n[o]])
		}
		in := goldentest.RandomImage(inW, 1, uint64(2000+i)).Pix
		got, want = make([]uint8, outW*3), make([]uint8, outW*3)
		hsumGo(got, in, &c, hsumSIMD(got, in, &c, c.simdPrefix(inW)))
		hsumGo(want, in, &c, 0)
		if string(got) != string(want) {
			t.Fatalf("hsum case %d (%d → %d pixels): SIMD and portable loops differ", i, inW, outW)
		}
	}
}
