package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/amt-dev/amt/experiments/record"
)

// Figure sizes and resolution.
const (
	figDPI     = 144
	wideWidth  = 7 * vg.Inch
	halfWidth  = 5.5 * vg.Inch
	figHeight  = 3.6 * vg.Inch
	tallHeight = 4.2 * vg.Inch
)

// palette is a colour-blind-safe palette (Okabe–Ito without its yellow,
// which is hard to see on white, then three of Paul Tol's), in the order
// series are drawn; the baseline is always drawn in grey.
var palette = [...]color.NRGBA{
	{0x00, 0x72, 0xB2, 0xff}, // blue
	{0xD5, 0x5E, 0x00, 0xff}, // vermillion
	{0x00, 0x9E, 0x73, 0xff}, // bluish green
	{0xCC, 0x79, 0xA7, 0xff}, // reddish purple
	{0xE6, 0x9F, 0x00, 0xff}, // orange
	{0x56, 0xB4, 0xE9, 0xff}, // sky blue
	{0x00, 0x00, 0x00, 0xff}, // black
	{0x88, 0x22, 0x55, 0xff}, // wine (Tol)
	{0x44, 0xAA, 0x99, 0xff}, // teal (Tol)
	{0x33, 0x22, 0x88, 0xff}, // indigo (Tol)
}

var baselineColor = color.NRGBA{0x55, 0x55, 0x55, 0xff}

func seriesColor(i int) color.NRGBA { return palette[i%len(palette)] }

// dashes is the dash pattern of baselines and reference lines.
var dashes = []vg.Length{vg.Points(5), vg.Points(3)}

// figure is a plot with its file stem and size. Its legend is drawn below
// the plot, in columns, so it never hides data; the figure grows by the
// legend's height.
type figure struct {
	Stem   string
	Plot   *plot.Plot
	W, H   vg.Length // size of the plot without the legend
	Legend []legendEntry
	// Left is a margin left of the plot (tick labels of text, whose
	// rendering can be wider than their measured width).
	Left vg.Length
}

type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer // drawn on top of each other
}

// legendFontSize is the legend's text size; legendLeft indents the legend
// by roughly the y-axis' width.
const (
	legendFontSize = 10
	legendLeft     = vg.Inch * 0.6
)

// legends splits the figure's legend into columns and returns them with the
// height of the tallest.
func (f figure) legends() ([]plot.Legend, vg.Length) {
	n := len(f.Legend)
	if n == 0 {
		return nil, 0
	}
	// As many columns (up to 3) as the widest entry allows.
	var widest vg.Length
	for _, e := range f.Legend {
		l := plot.NewLegend()
		l.TextStyle.Font.Size = vg.Points(legendFontSize)
		l.Add(e.name, e.thumbs...)
		r := l.Rectangle(draw.Canvas{})
		widest = max(widest, r.Max.X-r.Min.X)
	}
	fit := int((f.W - legendLeft) / (widest + vg.Points(12)))
	cols := max(1, min(fit, 3, (n+1)/2))
	rows := (n + cols - 1) / cols
	var out []plot.Legend
	var h vg.Length
	for c := 0; c < cols; c++ {
		l := plot.NewLegend()
		l.TextStyle.Font.Size = vg.Points(legendFontSize)
		l.Top, l.Left = true, true
		l.Padding = vg.Points(2)
		for _, e := range f.Legend[c*rows : min((c+1)*rows, n)] {
			l.Add(e.name, e.thumbs...)
		}
		r := l.Rectangle(draw.Canvas{})
		h = max(h, r.Max.Y-r.Min.Y)
		out = append(out, l)
	}
	return out, h
}

// draw draws the plot and, below it, the legend onto c.
func (f figure) draw(c draw.Canvas, legends []plot.Legend, legendH vg.Length) {
	const pad = vg.Length(8)
	// Margins keep the title and the last x tick label inside the image.
	const top, right = vg.Length(4), vg.Length(14)
	if len(legends) == 0 {
		f.Plot.Draw(draw.Crop(c, f.Left, -right, 0, -top))
		return
	}
	f.Plot.Draw(draw.Crop(c, f.Left, -right, legendH+2*pad, -top))
	left := legendLeft
	colW := (c.Max.X - c.Min.X - left) / vg.Length(len(legends))
	for i := range legends {
		x0 := c.Min.X + left + vg.Length(i)*colW
		lc := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: x0, Y: c.Min.Y + pad},
			Max: vg.Point{X: x0 + colW, Y: c.Min.Y + pad + legendH},
		}}
		legends[i].Draw(lc)
	}
}

// encode renders f as PNG and SVG.
func (f figure) encode() (pngData, svgData []byte, err error) {
	legends, lh := f.legends()
	h := f.H
	if len(legends) > 0 {
		h += lh + 16
	}
	c := vgimg.NewWith(vgimg.UseWH(f.W, h), vgimg.UseDPI(figDPI), vgimg.UseBackgroundColor(color.White))
	f.draw(draw.New(c), legends, lh)
	var pb bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&pb); err != nil {
		return nil, nil, fmt.Errorf("plots: %s.png: %w", f.Stem, err)
	}
	s := vgsvg.New(f.W, h)
	f.draw(draw.New(s), legends, lh)
	var sb bytes.Buffer
	if _, err := s.WriteTo(&sb); err != nil {
		return nil, nil, fmt.Errorf("plots: %s.svg: %w", f.Stem, err)
	}
	return pb.Bytes(), sb.Bytes(), nil
}

// write saves f as dir/<stem>.png and dir/<stem>.svg, atomically.
func (f figure) write(dir string) error {
	p, s, err := f.encode()
	if err != nil {
		return err
	}
	if err := record.WriteFileAtomic(filepath.Join(dir, f.Stem+".png"), p); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	if err := record.WriteFileAtomic(filepath.Join(dir, f.Stem+".svg"), s); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Add(plotter.NewGrid())
	return p
}

// saveDrawing renders a drawing of size w × h to path, as SVG when path
// ends in .svg and as PNG (figDPI, white background) otherwise, and writes
// it atomically. paint draws onto the whole canvas. The output depends on
// the drawing only (no time stamp), so the same input gives the same bytes.
func saveDrawing(path string, w, h vg.Length, paint func(draw.Canvas)) error {
	var buf bytes.Buffer
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		s := vgsvg.New(w, h)
		paint(draw.New(s))
		if _, err := s.WriteTo(&buf); err != nil {
			return fmt.Errorf("plots: %s: %w", path, err)
		}
	} else {
		c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(figDPI), vgimg.UseBackgroundColor(color.White))
		paint(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
			return fmt.Errorf("plots: %s: %w", path, err)
		}
	}
	if err := record.WriteFileAtomic(path, buf.Bytes()); err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	return nil
}
