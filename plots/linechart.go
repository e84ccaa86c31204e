package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
