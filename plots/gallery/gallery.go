// Package gallery draws contact sheets of metamorphic test cases: each
// case is a source image and its follow-up side by side, scaled to a common
// size (small images are enlarged by a whole factor with nearest-neighbour
// sampling, so that a 32×32 CIFAR-10 image stays sharp), with optional
// boxes (a detector's detections) and caption lines under the pair. amt
// check and amt run draw one sheet per metamorphic relation of the
// violations they found; the reports link them.
//
// The package draws only what it is given (it opens no data set and runs
// no model), and the same pairs give the same PNG bytes.
package gallery

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"

	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Box is a box drawn on an image, in that image's pixels, with a label
// (a class name and score) drawn at its top-left corner.
type Box struct {
	X, Y, W, H float64
	Label      string
}

// Pair is one test case: a source image and its follow-up, their boxes,
// and the caption lines drawn under them.
type Pair struct {
	Source, FollowUp           image.Image
	SourceBoxes, FollowUpBoxes []Box
	Caption                    []string
	// SourceLabel and FollowUpLabel are the small titles above the images
	// ("" for "source" and "follow-up").
	SourceLabel, FollowUpLabel string
}

// Options lays out a sheet.
type Options struct {
	// Side is the side of the square each image is fitted into, in pixels
	// (default 128: a 32×32 image enlarged 4×).
	Side int
	// Columns is the number of pairs per row (default 3).
	Columns int
	// CaptionLines is the number of caption lines per pair (default 3);
	// longer captions are cut, long lines end in "…".
	CaptionLines int
}

func (o Options) withDefaults() Options {
	if o.Side <= 0 {
		o.Side = 128
	}
	if o.Columns <= 0 {
		o.Columns = 3
	}
	if o.CaptionLines <= 0 {
		o.CaptionLines = 3
	}
	return o
}

// Layout constants, in pixels.
const (
	margin     = 12 // around the sheet and between pairs
	gap        = 6  // between the two images of a pair
	titleH     = 26 // the sheet's title
	labelH     = 16 // the small titles above the images
	lineH      = 15 // one caption line
	maxSide    = 1024
	maxPairs   = 1000
	fontSize   = 12
	titleSize  = 15
	boxLabelSz = 10
)

var (
	white    = color.RGBA{255, 255, 255, 255}
	ink      = color.RGBA{20, 20, 20, 255}
	grey     = color.RGBA{110, 110, 110, 255}
	frame    = color.RGBA{200, 200, 200, 255}
	srcColor = color.RGBA{0, 150, 60, 255}  // boxes on the source
	fupColor = color.RGBA{210, 30, 30, 255} // boxes on the follow-up
)

// fonts are the Go fonts (BSD licence, embedded in golang.org/x/image),
// parsed once; faces, which are not safe for concurrent use, are made per
// sheet.
var fonts = sync.OnceValues(func() ([2]*opentype.Font, error) {
	reg, err := opentype.Parse(goregular.TTF)
	if err != nil {
		return [2]*opentype.Font{}, err
	}
	bold, err := opentype.Parse(gobold.TTF)
	return [2]*opentype.Font{reg, bold}, err
})

// faces returns the faces a sheet uses, by role.
func faces() (map[string]font.Face, error) {
	f, err := fonts()
	if err != nil {
		return nil, err
	}
	out := map[string]font.Face{}
	for name, spec := range map[string]struct {
		f    *opentype.Font
		size float64
	}{"text": {f[0], fontSize}, "title": {f[1], titleSize}, "small": {f[0], boxLabelSz}, "label": {f[1], fontSize - 1}} {
		face, err := opentype.NewFace(spec.f, &opentype.FaceOptions{Size: spec.size, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, err
		}
		out[name] = face
	}
	return out, nil
}

// Sheet draws pairs in rows of opt.Columns under a title.
func Sheet(title string, pairs []Pair, opt Options) (*image.RGBA, error) {
	opt = opt.withDefaults()
	if opt.Side > maxSide || opt.Columns > 64 || opt.CaptionLines > 20 {
		return nil, fmt.Errorf("gallery: side %d (at most %d), %d columns (at most 64), %d caption lines (at most 20)", opt.Side, maxSide, opt.Columns, opt.CaptionLines)
	}
	if len(pairs) > maxPairs {
		return nil, fmt.Errorf("gallery: %d pairs, at most %d per sheet", len(pairs), maxPairs)
	}
	fs, err := faces()
	if err != nil {
		return nil, fmt.Errorf("gallery: font: %w", err)
	}
	cols, cellW, cellH := grid(len(pairs), opt)
	rows := (len(pairs) + cols - 1) / cols
	w := margin + cols*(cellW+margin)
	h := titleH + margin + rows*(cellH+margin)
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	fill(dst, dst.Bounds(), white)
	text(dst, fs["title"], margin, 19, ink, clip(fs["title"], title, w-2*margin))
	for i := range pairs {
		p := &pairs[i]
		if p.Source == nil || p.FollowUp == nil {
			return nil, fmt.Errorf("gallery: pair %d lacks an image", i+1)
		}
		srcR, fupR := Tiles(i, len(pairs), opt)
		x0, y0 := srcR.Min.X, srcR.Min.Y-labelH
		sl, fl := p.SourceLabel, p.FollowUpLabel
		if sl == "" {
			sl = "source"
		}
		if fl == "" {
			fl = "follow-up"
		}
		text(dst, fs["label"], x0, y0+12, grey, clip(fs["label"], sl, opt.Side))
		text(dst, fs["label"], x0+opt.Side+gap, y0+12, grey, clip(fs["label"], fl, opt.Side))
		iy := srcR.Min.Y
		place(dst, p.Source, srcR, p.SourceBoxes, srcColor, fs["small"])
		place(dst, p.FollowUp, fupR, p.FollowUpBoxes, fupColor, fs["small"])
		for l, line := range p.Caption {
			if l == opt.CaptionLines {
				break
			}
			if l == opt.CaptionLines-1 && len(p.Caption) > opt.CaptionLines {
				line += " …"
			}
			text(dst, fs["text"], x0, iy+opt.Side+4+(l+1)*lineH-3, ink, clip(fs["text"], line, cellW))
		}
	}
	return dst, nil
}

// grid returns a sheet's columns and the size of one pair's cell.
func grid(n int, opt Options) (cols, cellW, cellH int) {
	cols = min(opt.Columns, max(n, 1))
	return cols, 2*opt.Side + gap, labelH + opt.Side + 4 + opt.CaptionLines*lineH
}

// Tiles returns the squares into which Sheet fits the source and the
// follow-up of pair i of a sheet of n pairs laid out by opt (FitRect gives
// where in them an image lands).
func Tiles(i, n int, opt Options) (source, followUp image.Rectangle) {
	opt = opt.withDefaults()
	cols, cellW, cellH := grid(n, opt)
	x0 := margin + (i%cols)*(cellW+margin)
	y0 := titleH + margin + (i/cols)*(cellH+margin) + labelH
	source = image.Rect(x0, y0, x0+opt.Side, y0+opt.Side)
	return source, source.Add(image.Pt(opt.Side+gap, 0))
}

// FitRect returns where an image of w×h pixels is drawn in the square r:
// scaled by Fit and centred.
func FitRect(r image.Rectangle, w, h int) image.Rectangle {
	s, _ := Fit(w, h, r.Dx())
	tw, th := int(math.Round(float64(w)*s)), int(math.Round(float64(h)*s))
	tw, th = max(1, min(tw, r.Dx())), max(1, min(th, r.Dy()))
	ox, oy := r.Min.X+(r.Dx()-tw)/2, r.Min.Y+(r.Dy()-th)/2
	return image.Rect(ox, oy, ox+tw, oy+th)
}

// EncodePNG encodes a sheet as PNG (the same image gives the same bytes).
func EncodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("gallery: encoding PNG: %w", err)
	}
	return buf.Bytes(), nil
}

// Fit returns the scale at which an image of w×h pixels is drawn into a
// square of side pixels: a whole factor of at least 2 with nearest-neighbour
// sampling when it fits twice or more (pixels stay sharp), else the largest
// factor that fits.
func Fit(w, h, side int) (scale float64, nearest bool) {
	s := float64(side) / float64(max(w, h, 1))
	if s >= 2 {
		return math.Floor(s), true
	}
	return s, false
}

// place draws img fitted and centred in r with a frame, and its boxes.
func place(dst *image.RGBA, img image.Image, r image.Rectangle, boxes []Box, c color.RGBA, face font.Face) {
	b := img.Bounds()
	s, nearest := Fit(b.Dx(), b.Dy(), r.Dx())
	target := FitRect(r, b.Dx(), b.Dy())
	ox, oy := target.Min.X, target.Min.Y
	if nearest {
		xdraw.NearestNeighbor.Scale(dst, target, img, b, xdraw.Src, nil)
	} else {
		xdraw.CatmullRom.Scale(dst, target, img, b, xdraw.Src, nil)
	}
	outline(dst, target.Inset(-1), frame, 1)
	for _, bx := range boxes {
		x1 := ox + int(math.Round((bx.X-float64(b.Min.X))*s))
		y1 := oy + int(math.Round((bx.Y-float64(b.Min.Y))*s))
		x2 := ox + int(math.Round((bx.X+bx.W-float64(b.Min.X))*s))
		y2 := oy + int(math.Round((bx.Y+bx.H-float64(b.Min.Y))*s))
		br := image.Rect(x1, y1, x2, y2).Intersect(target)
		if br.Empty() {
			continue
		}
		outline(dst, br, c, 2)
		if bx.Label != "" {
			lw := font.MeasureString(face, bx.Label).Ceil() + 4
			lr := image.Rect(br.Min.X, br.Min.Y, min(br.Min.X+lw, target.Max.X), min(br.Min.Y+12, target.Max.Y))
			fill(dst, lr, c)
			text(dst, face, lr.Min.X+2, lr.Min.Y+9, white, clip(face, bx.Label, lr.Dx()-2))
		}
	}
}

func fill(dst *image.RGBA, r image.Rectangle, c color.RGBA) {
	xdraw.Draw(dst, r, &image.Uniform{c}, image.Point{}, xdraw.Src)
}

// outline draws a rectangle's border of width t inside r.
func outline(dst *image.RGBA, r image.Rectangle, c color.RGBA, t int) {
	r = r.Intersect(dst.Bounds())
	if r.Empty() {
		return
	}
	fill(dst, image.Rect(r.Min.X, r.Min.Y, r.Max.X, min(r.Min.Y+t, r.Max.Y)), c)
	fill(dst, image.Rect(r.Min.X, max(r.Max.Y-t, r.Min.Y), r.Max.X, r.Max.Y), c)
	fill(dst, image.Rect(r.Min.X, r.Min.Y, min(r.Min.X+t, r.Max.X), r.Max.Y), c)
	fill(dst, image.Rect(max(r.Max.X-t, r.Min.X), r.Min.Y, r.Max.X, r.Max.Y), c)
}

// text draws s with its baseline at (x, y).
func text(dst *image.RGBA, face font.Face, x, y int, c color.RGBA, s string) {
	d := font.Drawer{Dst: dst, Src: &image.Uniform{c}, Face: face, Dot: fixed.P(x, y)}
	d.DrawString(s)
}

// clip shortens s to at most w pixels, ending it in "…" when cut.
func clip(face font.Face, s string, w int) string {
	if font.MeasureString(face, s).Ceil() <= w {
		return s
	}
	r := []rune(s)
	for len(r) > 0 {
		r = r[:len(r)-1]
		if t := string(r) + "…"; font.MeasureString(face, t).Ceil() <= w {
			return t
		}
	}
	return ""
}
