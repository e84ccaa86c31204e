package gallery

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"strings"
	"testing"
)

func TestFit(t *testing.T) {
	for _, c := range []struct {
		w, h, side int
		scale      float64
		nearest    bool
	}{
		{32, 32, 128, 4, true},       // CIFAR-10: 4×, sharp
		{32, 32, 100, 3, true},       // a whole factor that fits
		{640, 480, 224, 0.35, false}, // COCO: shrunk smoothly
		{100, 100, 150, 1.5, false},
	} {
		s, n := Fit(c.w, c.h, c.side)
		if n != c.nearest || math.Abs(s-c.scale) > 1e-9 {
			t.Errorf("Fit(%d, %d, %d) = %v, %v; want %v, %v", c.w, c.h, c.side, s, n, c.scale, c.nearest)
		}
	}
	if r := FitRect(image.Rect(10, 20, 138, 148), 32, 32); r != image.Rect(10, 20, 138, 148) {
		t.Errorf("FitRect 32×32 in 128: %v", r)
	}
	if r := FitRect(image.Rect(0, 0, 224, 224), 640, 320); r.Dx() != 224 || r.Dy() != 112 || r.Min.Y != 56 {
		t.Errorf("FitRect 640×320 in 224: %v", r)
	}
}

// checker is a w×h image of distinct colours per pixel.
func checker(w, h int, seed uint8) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			m.SetRGBA(x, y, color.RGBA{uint8(x*7) + seed, uint8(y * 7), seed, 255})
		}
	}
	return m
}

// Sheet places each pair's images in the tiles Tiles names, enlarged
// by nearest neighbour, draws boxes in the follow-up's colour, and the
// same input gives the same PNG.
func TestSheet(t *testing.T) {
	var pairs []Pair
	for i := range 4 {
		pairs = append(pairs, Pair{Source: checker(32, 32, uint8(10*i)), FollowUp: checker(32, 32, uint8(10*i+5)), Caption: []string{"rotation 30°", "cat → dog"}})
	}
	pairs[3].FollowUpBoxes = []Box{{X: 4, Y: 4, W: 10, H: 10, Label: "cat 90%"}}
	opt := Options{Side: 128, Columns: 3}
	sheet, err := Sheet("title", pairs, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		src, fup := Tiles(i, len(pairs), opt)
		for _, tile := range []struct {
			r   image.Rectangle
			img image.Image
		}{{src, p.Source}, {fup, p.FollowUp}} {
			at := FitRect(tile.r, 32, 32)
			for _, xy := range [][2]int{{0, 0}, {31, 31}, {20, 25}, {31, 0}} {
				want := tile.img.At(xy[0], xy[1])
				for _, d := range []int{0, 3} {
					if got := sheet.At(at.Min.X+4*xy[0]+d, at.Min.Y+4*xy[1]+d); got != want {
						t.Errorf("pair %d %v: pixel %v = %v, want %v", i, tile.r, xy, got, want)
					}
				}
			}
		}
	}
	// The box's left edge on pair 3's follow-up, at y = 10 in image pixels.
	_, fup := Tiles(3, 4, opt)
	at := FitRect(fup, 32, 32)
	if got := sheet.RGBAAt(at.Min.X+16, at.Min.Y+40); got != fupColor {
		t.Errorf("box edge: %v, want %v", got, fupColor)
	}
	b1, _ := EncodePNG(sheet)
	sheet2, _ := Sheet("title", pairs, opt)
	b2, _ := EncodePNG(sheet2)
	if !bytes.Equal(b1, b2) {
		t.Error("the same pairs give different PNGs")
	}
	if _, err := png.Decode(bytes.NewReader(b1)); err != nil {
		t.Fatal(err)
	}
	if _, err := Sheet("t", []Pair{{Source: checker(2, 2, 0)}}, opt); err == nil || !strings.Contains(err.Error(), "pair 1 lacks an image") {
		t.Errorf("a pair without a follow-up: %v", err)
	}
	if _, err := Sheet("t", pairs, Options{Side: 5000}); err == nil {
		t.Error("side 5000: no error")
	}
}
