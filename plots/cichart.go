package plots

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

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
