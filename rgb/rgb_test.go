package rgb

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func TestFromImage(t *testing.T) {
	want := Image{W: 2, H: 1, Pix: []uint8{10, 20, 30, 40, 50, 60}}
	rgba := image.NewRGBA(image.Rect(0, 0, 2, 1))
	rgba.Set(0, 0, color.RGBA{10, 20, 30, 255})
	rgba.Set(1, 0, color.RGBA{40, 50, 60, 255})
	nrgba := image.NewNRGBA(image.Rect(5, 5, 7, 6)) // non-zero origin
	nrgba.Set(5, 5, color.NRGBA{10, 20, 30, 255})
	nrgba.Set(6, 5, color.NRGBA{40, 50, 60, 255})
	gray := image.NewGray(image.Rect(0, 0, 2, 1))
	gray.Pix = []uint8{7, 9}
	for _, tc := range []struct {
		name string
		src  image.Image
		want Image
	}{
		{"rgba", rgba, want},
		{"nrgba", nrgba, want},
		{"rgb", want, want},
		{"gray", gray, Image{W: 2, H: 1, Pix: []uint8{7, 7, 7, 9, 9, 9}}},
		{"paletted", paletted(), Image{W: 1, H: 1, Pix: []uint8{1, 2, 3}}},
	} {
		if got := FromImage(tc.src); !got.Equal(tc.want) {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func paletted() image.Image {
	p := image.NewPaletted(image.Rect(0, 0, 1, 1), color.Palette{color.RGBA{1, 2, 3, 255}})
	return p
}

// TestPNGRoundTrip: an Image is an image.Image that PNG encodes losslessly.
func TestPNGRoundTrip(t *testing.T) {
	m := New(3, 2)
	for i := range m.Pix {
		m.Pix[i] = uint8(i * 13)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	dec, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := FromImage(dec); !got.Equal(m) {
		t.Fatalf("round trip changed the image: %v vs %v", got.Pix, m.Pix)
	}
	if c := m.At(5, 0); c != (color.RGBA{}) {
		t.Errorf("At outside the image = %v, want zero", c)
	}
}

func TestValidateAndClone(t *testing.T) {
	if err := (Image{W: 2, H: 2, Pix: make([]uint8, 11)}).Validate(); err == nil || !strings.Contains(err.Error(), "needs 12 bytes, has 11") {
		t.Errorf("short buffer: %v", err)
	}
	if err := (Image{W: -1}).Validate(); err == nil {
		t.Error("negative size accepted")
	}
	m := New(1, 1)
	c := m.Clone()
	c.Pix[0] = 9
	if m.Pix[0] != 0 {
		t.Error("Clone shares pixels")
	}
}

func TestBox(t *testing.T) {
	b := BoxFromCorners(1, 2, 4, 8)
	if b != (Box{X: 1, Y: 2, W: 3, H: 6}) || b.Area() != 18 {
		t.Fatalf("box %+v area %v", b, b.Area())
	}
	if x1, y1, x2, y2 := b.Corners(); x1 != 1 || y1 != 2 || x2 != 4 || y2 != 8 {
		t.Fatalf("corners %v %v %v %v", x1, y1, x2, y2)
	}
}
