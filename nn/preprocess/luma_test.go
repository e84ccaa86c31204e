package preprocess

import (
	"bytes"
	"os"
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// TestLumaPillow: Luma, and a Gray classifier's resize, equal Pillow 9.4's
// Image.convert("L") and its bilinear resize of the L image on the first 16
// shared CIFAR-10 images (testdata/make_luma.py made the golden bytes).
func TestLumaPillow(t *testing.T) {
	golden, err := os.ReadFile("testdata/luma_cifar16.bin")
	if err != nil {
		t.Fatal(err)
	}
	const per = 32*32 + 28*28 + 45*45
	if len(golden) != 16*per {
		t.Fatalf("golden holds %d bytes, want %d", len(golden), 16*per)
	}
	for i, im := range cifarImages(t, 16) {
		g := golden[i*per : (i+1)*per]
		l := Luma(im.Pix)
		if !bytes.Equal(l, g[:1024]) {
			t.Fatalf("image %d: Luma differs from Pillow's convert(\"L\")", i)
		}
		for _, size := range []struct{ n, off int }{{28, 1024}, {45, 1024 + 784}} {
			want := g[size.off : size.off+size.n*size.n]
			dst := make([]float32, size.n*size.n)
			c := Classifier{W: size.n, H: size.n, Norm: Unit(), Gray: true}
			if err := c.Into(dst, im); err != nil {
				t.Fatal(err)
			}
			for p, v := range dst {
				if w := float32(want[p]) / 255; v != w {
					t.Fatalf("image %d, %dx%d, pixel %d: %v, want Pillow's %d/255 = %v", i, size.n, size.n, p, v, want[p], w)
				}
			}
		}
	}
}

// TestGrayClassifier: a grey image's luma is its grey value; the single
// channel is normalised with the first mean and std, rounded per step as
// torchvision does; the destination must hold one channel.
func TestGrayClassifier(t *testing.T) {
	im := rgb.New(2, 1)
	copy(im.Pix, []uint8{7, 7, 7, 200, 200, 200})
	if got := Luma(im.Pix); !bytes.Equal(got, []uint8{7, 200}) {
		t.Fatalf("Luma of grey pixels = %v", got)
	}
	c := Classifier{W: 2, H: 1, Norm: Norm{Mean: [3]float32{0.2860, 9, 9}, Std: [3]float32{0.3530, 1, 1}}, Gray: true}
	if c.Len() != 2 || c.Channels() != 1 {
		t.Fatalf("Len %d, Channels %d", c.Len(), c.Channels())
	}
	dst := make([]float32, 2)
	if err := c.Into(dst, im); err != nil {
		t.Fatal(err)
	}
	for i, v := range []uint8{7, 200} {
		x := float32(float32(v)/255 - float32(0.2860))
		if want := x / float32(0.3530); dst[i] != want {
			t.Fatalf("value %d = %v, want %v", i, dst[i], want)
		}
	}
	if err := c.Into(make([]float32, 6), im); err == nil {
		t.Fatal("a 3-channel destination for a grey classifier: no error")
	}
}
