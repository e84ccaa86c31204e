package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strconv"
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

// barSeries is one group member of a grouped bar chart, in percent.
type barSeries struct {
	Name     string
	Values   []float64 // one per category; NaN draws nothing
	Baseline bool      // drawn grey and hatched-looking (lighter)
}

// barChart draws grouped bars: one group per category, one bar per series.
func barChart(stem, title, ylabel string, categories []string, series []barSeries) (figure, error) {
	p := newPlot(title, "", ylabel)
	p.X.Tick.Label.Font.Size = vg.Points(10)
	n := len(series)
	width := vg.Points(math.Min(22, 160/float64(max(n, 1)*max(len(categories), 1)/2+1)))
	width = vg.Points(float64(int(width))) // whole points keep output stable
	top := 0.0
	ci := 0
	var legend []legendEntry
	for i, s := range series {
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			if math.IsNaN(v) {
				v = 0
			}
			vals[j] = v
			top = math.Max(top, v)
		}
		b, err := plotter.NewBarChart(vals, width)
		if err != nil {
			return figure{}, fmt.Errorf("plots: %s: series %q: %w", stem, s.Name, err)
		}
		b.Offset = vg.Length(float64(i)-float64(n-1)/2) * width
		b.LineStyle.Width = vg.Points(0.5)
		if s.Baseline {
			b.Color = color.NRGBA{0xBB, 0xBB, 0xBB, 0xff}
			b.LineStyle.Color = baselineColor
		} else {
			b.Color = seriesColor(ci)
			ci++
		}
		p.Add(b)
		legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{b}})
	}
	p.NominalX(categories...)
	p.Y.Min = 0
	p.Y.Max = niceCeil(top * 1.15)
	if p.Y.Max == 0 {
		p.Y.Max = 1
	}
	p.Y.Tick.Marker = stepTicks{}
	return figure{Stem: stem, Plot: p, W: wideWidth, H: figHeight, Legend: legend}, nil
}

// lineSeries is one curve of a line chart.
type lineSeries struct {
	Name     string
	X, Y     []float64
	Baseline bool // dashed grey, as the original draws the baseline
	Dashed   bool // dashed in the series colour (reference lines)
	// Lo and Hi, when set, draw a shaded band (spread over seeds).
	Lo, Hi []float64
	// Color, when set, overrides the automatic colour.
	Color *color.NRGBA
	// Points marks every point with a filled circle. Faint, when set (one
	// flag per point), draws a point as a hollow circle that the line does
	// not pass through (a rate from too few observations). A NaN in Y
	// leaves a gap: the line does not join the points on either side.
	Points bool
	Faint  []bool
	// FaintName, when set, is the legend entry of the faint points (drawn
	// only when there are some).
	FaintName string
}

// markerRadius is the radius of the points of a lineSeries.
const markerRadius = vg.Length(2.6)

// lineSegments splits a series into the runs of consecutive points the
// line joins: those with a value (not NaN) and not faint. A run of one
// point is returned too (drawn as a marker only).
func lineSegments(x, y []float64, faint []bool) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range x {
		if math.IsNaN(y[i]) || (faint != nil && faint[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: x[i], Y: y[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// lineChart draws curves; ymin/ymax fix the y-range (NaN = automatic),
// and zeroLine draws the original's dashed vertical line at x = 0.
func lineChart(stem, title, xlabel, ylabel string, series []lineSeries, ymin, ymax float64, zeroLine bool, w vg.Length) (figure, error) {
	p := newPlot(title, xlabel, ylabel)
	ci := 0
	lo, hi := math.Inf(1), math.Inf(-1)
	var bands, lines, marks []plot.Plotter
	var legend []legendEntry
	for _, s := range series {
		if len(s.X) != len(s.Y) || len(s.X) == 0 || (s.Faint != nil && len(s.Faint) != len(s.X)) {
			return figure{}, fmt.Errorf("plots: %s: series %q has %d x and %d y values", stem, s.Name, len(s.X), len(s.Y))
		}
		col := baselineColor
		switch {
		case s.Color != nil:
			col = *s.Color
		case !s.Baseline:
			col = seriesColor(ci)
			ci++
		}
		for i := range s.X {
			if !math.IsNaN(s.Y[i]) {
				lo, hi = math.Min(lo, s.Y[i]), math.Max(hi, s.Y[i])
			}
		}
		if s.Lo != nil && s.Hi != nil {
			poly := make(plotter.XYs, 0, 2*len(s.X))
			for i := range s.X {
				poly = append(poly, plotter.XY{X: s.X[i], Y: s.Lo[i]})
				lo = math.Min(lo, s.Lo[i])
			}
			for i := len(s.X) - 1; i >= 0; i-- {
				poly = append(poly, plotter.XY{X: s.X[i], Y: s.Hi[i]})
				hi = math.Max(hi, s.Hi[i])
			}
			pg, err := plotter.NewPolygon(poly)
			if err != nil {
				return figure{}, fmt.Errorf("plots: %s: band of %q: %w", stem, s.Name, err)
			}
			pg.Color = color.NRGBA{col.R, col.G, col.B, bandAlpha(len(series))}
			pg.LineStyle.Width = 0
			bands = append(bands, pg)
		}
		segs := lineSegments(s.X, s.Y, s.Faint)
		var thumbs []plot.Thumbnailer
		var solid, faint plotter.XYs // the points drawn as markers
		for _, seg := range segs {
			if len(seg) == 1 && len(segs) > 1 {
				solid = append(solid, seg[0]) // an isolated point: no line to draw
				continue
			}
			l, err := plotter.NewLine(seg)
			if err != nil {
				return figure{}, fmt.Errorf("plots: %s: series %q: %w", stem, s.Name, err)
			}
			l.LineStyle.Color = col
			l.LineStyle.Width = vg.Points(1.6)
			if s.Baseline || s.Dashed {
				l.LineStyle.Dashes = dashes
			}
			lines = append(lines, l)
			if thumbs == nil {
				thumbs = append(thumbs, l)
			}
			if s.Points {
				solid = append(solid, seg...)
			}
		}
		for i := range s.X {
			if s.Faint != nil && s.Faint[i] && !math.IsNaN(s.Y[i]) {
				faint = append(faint, plotter.XY{X: s.X[i], Y: s.Y[i]})
			}
		}
		var faintThumb plot.Thumbnailer
		for _, m := range []struct {
			pts   plotter.XYs
			shape draw.GlyphDrawer
		}{{solid, draw.CircleGlyph{}}, {faint, draw.RingGlyph{}}} {
			if len(m.pts) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(m.pts)
			if err != nil {
				return figure{}, fmt.Errorf("plots: %s: points of %q: %w", stem, s.Name, err)
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: col, Radius: markerRadius, Shape: m.shape}
			marks = append(marks, sc)
			if len(thumbs) < 2 && (s.Points || thumbs == nil) {
				thumbs = append(thumbs, sc)
			}
			faintThumb = sc // the last: the faint points' when there are any
		}
		if thumbs == nil {
			return figure{}, fmt.Errorf("plots: %s: series %q has no value to draw", stem, s.Name)
		}
		legend = append(legend, legendEntry{s.Name, thumbs})
		if len(faint) > 0 && s.FaintName != "" {
			legend = append(legend, legendEntry{s.FaintName, []plot.Thumbnailer{faintThumb}})
		}
	}
	p.Add(bands...)
	p.Add(lines...)
	p.Add(marks...)
	if math.IsNaN(ymin) {
		ymin = math.Min(0, lo)
	}
	if math.IsNaN(ymax) {
		ymax = niceCeil(hi * 1.1)
	}
	// Never cut data off: widen a fixed range the data leave.
	ymin = math.Min(ymin, math.Floor(lo))
	if hi > ymax {
		ymax = niceCeil(hi)
	}
	if ymax <= ymin {
		ymax = ymin + 1
	}
	p.Y.Min, p.Y.Max = ymin, ymax
	p.Y.Tick.Marker = stepTicks{}
	if zeroLine {
		z, err := plotter.NewLine(plotter.XYs{{X: 0, Y: ymin}, {X: 0, Y: ymax}})
		if err != nil {
			return figure{}, fmt.Errorf("plots: %s: %w", stem, err)
		}
		z.LineStyle.Color = color.NRGBA{0x99, 0x99, 0x99, 0xff}
		z.LineStyle.Width = vg.Points(0.8)
		z.LineStyle.Dashes = []vg.Length{vg.Points(2), vg.Points(2)}
		p.Add(z)
	}
	return figure{Stem: stem, Plot: p, W: w, H: figHeight, Legend: legend}, nil
}

// niceCeil rounds v up to a multiple of 10 (for v > 10), 1 (v > 1) or 0.1.
func niceCeil(v float64) float64 {
	switch {
	case v <= 0 || math.IsNaN(v) || math.IsInf(v, 0):
		return 0
	case v > 10:
		return math.Ceil(v/10) * 10
	case v > 1:
		return math.Ceil(v)
	}
	return math.Ceil(v*10) / 10
}

// degreeTicks marks every 15° (rotation) or 10° (shear) so the x-axis
// reads in degrees.
type degreeTicks struct{ step float64 }

func (d degreeTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for v := math.Ceil(min/d.step) * d.step; v <= max+1e-9; v += d.step {
		out = append(out, plot.Tick{Value: v, Label: fmt.Sprintf("%g°", v)})
	}
	return out
}

// stepTicks labels about 5–10 round values (steps of 1, 2, 5 × 10^k) so
// percentages read easily.
type stepTicks struct{}

func (stepTicks) Ticks(min, max float64) []plot.Tick {
	span := max - min
	if !(span > 0) {
		return plot.DefaultTicks{}.Ticks(min, max)
	}
	step := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{1, 2, 5, 10} {
		if span/(step*m/10) <= 10 {
			step = step * m / 10
			break
		}
	}
	var out []plot.Tick
	for i := math.Ceil(min / step); i*step <= max+step*1e-9; i++ {
		v := i * step
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
	}
	return out
}

// bandAlpha makes spread bands fainter when many series overlap.
func bandAlpha(series int) uint8 {
	if series > 4 {
		return 0x22
	}
	return 0x40
}

// ciRow is one row of an interval chart: a value with its interval.
type ciRow struct {
	Name         string
	Mean, Lo, Hi float64 // Lo and Hi NaN: no interval
}

// refLine is a vertical reference line of an interval chart.
type refLine struct {
	Name  string
	Value float64
}

// ciPoints implements the plotter interfaces of the interval chart's
// points and horizontal error bars; row i is drawn at y = n−1−i so that
// the first row is on top.
type ciPoints []ciRow

func (c ciPoints) Len() int { return len(c) }
func (c ciPoints) XY(i int) (float64, float64) {
	return c[i].Mean, float64(len(c) - 1 - i)
}
func (c ciPoints) XError(i int) (float64, float64) {
	if math.IsNaN(c[i].Lo) || math.IsNaN(c[i].Hi) {
		return 0, 0
	}
	return c[i].Mean - c[i].Lo, c[i].Hi - c[i].Mean
}

// ciChart draws one row per item: a point at its mean and a horizontal
// bar over its interval, with dashed vertical reference lines (oracles).
// Rows whose mean is NaN are left out.
func ciChart(stem, title, xlabel string, rows []ciRow, refs []refLine) (figure, error) {
	var pts ciPoints
	for _, r := range rows {
		if !math.IsNaN(r.Mean) {
			pts = append(pts, r)
		}
	}
	if len(pts) == 0 {
		return figure{}, fmt.Errorf("plots: %s: no value to draw", stem)
	}
	p := newPlot(title, xlabel, "")
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range pts {
		lo, hi = math.Min(lo, r.Mean), math.Max(hi, r.Mean)
		if !math.IsNaN(r.Lo) {
			lo, hi = math.Min(lo, r.Lo), math.Max(hi, r.Hi)
		}
	}
	var legend []legendEntry
	for i, r := range refs {
		lo, hi = math.Min(lo, r.Value), math.Max(hi, r.Value)
		l, err := plotter.NewLine(plotter.XYs{{X: r.Value, Y: -0.5}, {X: r.Value, Y: float64(len(pts)) - 0.5}})
		if err != nil {
			return figure{}, fmt.Errorf("plots: %s: %w", stem, err)
		}
		l.LineStyle.Color = seriesColor(i + 1)
		l.LineStyle.Width = vg.Points(1.2)
		l.LineStyle.Dashes = dashes
		p.Add(l)
		legend = append(legend, legendEntry{r.Name, []plot.Thumbnailer{l}})
	}
	bars, err := plotter.NewXErrorBars(pts)
	if err != nil {
		return figure{}, fmt.Errorf("plots: %s: %w", stem, err)
	}
	bars.LineStyle.Color = seriesColor(0)
	bars.LineStyle.Width = vg.Points(1.4)
	bars.CapWidth = vg.Points(7)
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return figure{}, fmt.Errorf("plots: %s: %w", stem, err)
	}
	sc.GlyphStyle = draw.GlyphStyle{Color: seriesColor(0), Radius: markerRadius, Shape: draw.CircleGlyph{}}
	p.Add(bars, sc)
	legend = append([]legendEntry{{"mean with 95 % CI", []plot.Thumbnailer{sc}}}, legend...)
	names := make([]string, len(pts))
	for i, r := range pts {
		names[len(pts)-1-i] = r.Name
	}
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.6, float64(len(pts))-0.4
	pad := math.Max((hi-lo)*0.06, 0.5)
	p.X.Min, p.X.Max = math.Floor(lo-pad), math.Ceil(hi+pad)
	if lo >= 0 {
		p.X.Min = math.Max(0, p.X.Min) // rates: no negative axis
	}
	p.X.Tick.Marker = stepTicks{}
	h := max(figHeight, vg.Length(len(pts))*vg.Points(24)+vg.Inch*1.1)
	// The names are drawn wider than gonum measures them: a margin of a
	// tenth of the widest keeps its first letters inside the image.
	var widest vg.Length
	for _, n := range names {
		widest = max(widest, p.Y.Tick.Label.Width(n))
	}
	return figure{Stem: stem, Plot: p, W: halfWidth, H: h, Legend: legend, Left: widest / 10}, nil
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
