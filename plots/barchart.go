package plots

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

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
