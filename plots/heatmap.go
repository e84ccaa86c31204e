package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Layout of the heat map, in points.
const (
	heatCellH     = 22
	heatMinCellW  = 40
	heatValueSize = 9
	heatLabelSize = 10
	heatBarGap    = 14 // between the cells and the colour scale
	heatBarW      = 12 // width of the colour scale
	heatBarArea   = 72 // room right of the cells for the scale and its labels
	heatSteps     = 128
)

// heatNaN is the fill of a cell without a value.
var heatNaN = color.NRGBA{0xBB, 0xBB, 0xBB, 0xff}

// divergingStops are ColorBrewer's RdBu (Brewer, colorbrewer2.org; 11
// classes, the centre and the five of each side), from the centre (0)
// outwards: negative values go to blue, positive to red. It is
// colour-blind safe.
var divergingStops = struct{ neg, pos [6]color.NRGBA }{
	neg: [6]color.NRGBA{{0xF7, 0xF7, 0xF7, 0xff}, {0xD1, 0xE5, 0xF0, 0xff}, {0x92, 0xC5, 0xDE, 0xff}, {0x43, 0x93, 0xC3, 0xff}, {0x21, 0x66, 0xAC, 0xff}, {0x05, 0x30, 0x61, 0xff}},
	pos: [6]color.NRGBA{{0xF7, 0xF7, 0xF7, 0xff}, {0xFD, 0xDB, 0xC7, 0xff}, {0xF4, 0xA5, 0x82, 0xff}, {0xD6, 0x60, 0x4D, 0xff}, {0xB2, 0x18, 0x2B, 0xff}, {0x67, 0x00, 0x1F, 0xff}},
}

// divergingColor maps v to the diverging palette centred at 0: v is
// clipped to [lo, hi], and |v| / max(|lo|, |hi|) goes from the near-white
// centre to the darkest blue (v < 0) or red (v > 0), so that equal
// magnitudes get equal intensity on both sides. NaN is grey.
func divergingColor(v, lo, hi float64) color.NRGBA {
	if math.IsNaN(v) {
		return heatNaN
	}
	v = math.Max(lo, math.Min(hi, v))
	m := math.Max(math.Abs(lo), math.Abs(hi))
	if m == 0 {
		return divergingStops.pos[0]
	}
	u := math.Abs(v) / m
	stops := divergingStops.pos
	if v < 0 {
		stops = divergingStops.neg
	}
	f := u * float64(len(stops)-1)
	i := min(int(f), len(stops)-2)
	t := f - float64(i)
	mix := func(a, b uint8) uint8 { return uint8(math.Round(float64(a) + t*(float64(b)-float64(a)))) }
	a, b := stops[i], stops[i+1]
	return color.NRGBA{mix(a.R, b.R), mix(a.G, b.G), mix(a.B, b.B), 0xff}
}

// darkFill says whether text on c should be white (relative luminance,
// ITU-R BT.709 weights, below one half).
func darkFill(c color.NRGBA) bool {
	return 0.2126*float64(c.R)+0.7152*float64(c.G)+0.0722*float64(c.B) < 0.5*255
}

// heatCells is the plotter of HeatMap's cells: row i of values at
// y = rows−1−i (the first row on top), column j at x = j.
type heatCells struct {
	values [][]float64
	lo, hi float64
}

func (h heatCells) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	n := len(h.values)
	sty := cdText(heatValueSize)
	sty.XAlign, sty.YAlign = draw.XCenter, draw.YCenter
	grid := draw.LineStyle{Color: color.White, Width: vg.Points(1)}
	for i, row := range h.values {
		yc := float64(n - 1 - i)
		for j, v := range row {
			x0, x1 := trX(float64(j)-0.5), trX(float64(j)+0.5)
			y0, y1 := trY(yc-0.5), trY(yc+0.5)
			fill := divergingColor(v, h.lo, h.hi)
			rect := []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
			c.FillPolygon(fill, rect)
			c.StrokeLines(grid, append(rect, rect[0]))
			label := "–"
			if !math.IsNaN(v) {
				label = fmt.Sprintf("%.2f", v)
			}
			sty.Color = color.Black
			if darkFill(fill) {
				sty.Color = color.White
			}
			c.FillText(sty, vg.Point{X: (x0 + x1) / 2, Y: (y0 + y1) / 2}, label)
		}
	}
}

// HeatMap draws a matrix of values (rows × cols) as coloured cells with
// the value printed in each cell ("%.2f"), the row labels on the left, the
// column labels rotated by 45° at the bottom, and a colour scale on the
// right. The palette is diverging, centred at 0 (ColorBrewer's RdBu:
// negative blue, positive red, equal magnitudes equally intense; see
// divergingColor), and values are clipped to [lo, hi]. NaN cells are drawn
// grey and printed as "–". It writes an SVG when path ends in .svg and a
// PNG otherwise; the same input gives the same bytes.
func HeatMap(path, title string, rows, cols []string, values [][]float64, lo, hi float64) error {
	if len(rows) == 0 || len(cols) == 0 {
		return fmt.Errorf("plots: heat map %s: %d rows and %d columns, need at least one of each", path, len(rows), len(cols))
	}
	if len(values) != len(rows) {
		return fmt.Errorf("plots: heat map %s: %d rows of values for %d row labels", path, len(values), len(rows))
	}
	for i, r := range values {
		if len(r) != len(cols) {
			return fmt.Errorf("plots: heat map %s: row %q has %d values for %d columns", path, rows[i], len(r), len(cols))
		}
	}
	if !(lo < hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return fmt.Errorf("plots: heat map %s: colour range [%v, %v]", path, lo, hi)
	}

	p := plot.New() // as newPlot, without the grid
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(6)
	p.Add(heatCells{values: values, lo: lo, hi: hi})
	p.NominalX(cols...)
	p.NominalY(reversed(rows)...)
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.Min, p.X.Max = -0.5, float64(len(cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	p.X.Tick.Label.Font.Size = vg.Points(heatLabelSize)
	p.Y.Tick.Label.Font.Size = vg.Points(heatLabelSize)
	p.X.Tick.Label.Rotation = math.Pi / 4
	p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop

	// Size: cells wide enough for their values, room for the labels.
	valSty := cdText(heatValueSize)
	cellW := vg.Length(heatMinCellW)
	for _, r := range values {
		for _, v := range r {
			cellW = max(cellW, valSty.Width(fmt.Sprintf("%.2f", v))+10)
		}
	}
	var rowW, colW vg.Length
	for _, r := range rows {
		rowW = max(rowW, p.Y.Tick.Label.Width(r))
	}
	for _, c := range cols {
		colW = max(colW, p.X.Tick.Label.Width(c))
	}
	const top, margin = 6, 10
	titleH := vg.Length(0)
	if title != "" {
		titleH = p.Title.TextStyle.Height(title) + p.Title.Padding
	}
	plotW := rowW + 12 + vg.Length(len(cols))*cellW + colW*0.72
	width := margin + plotW + heatBarArea + margin
	height := top + titleH + vg.Length(len(rows))*heatCellH + colW*0.72 + 4 + margin

	paint := func(c draw.Canvas) {
		c.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: width, Y: 0}, {X: width, Y: height}, {X: 0, Y: height}})
		pc := draw.Crop(c, margin, -(heatBarArea + margin), margin, -top)
		p.Draw(pc)
		// The colour scale beside the data area, as tall as it.
		da := p.DataCanvas(pc)
		x0 := da.Max.X + heatBarGap
		y := func(v float64) vg.Length {
			return da.Min.Y + vg.Length((v-lo)/(hi-lo))*(da.Max.Y-da.Min.Y)
		}
		for s := 0; s < heatSteps; s++ {
			a := lo + (hi-lo)*float64(s)/heatSteps
			b := lo + (hi-lo)*float64(s+1)/heatSteps
			col := divergingColor((a+b)/2, lo, hi)
			// Overlap the next step by a hair so no seam shows.
			c.FillPolygon(col, []vg.Point{{X: x0, Y: y(a)}, {X: x0 + heatBarW, Y: y(a)}, {X: x0 + heatBarW, Y: y(b) + 0.3}, {X: x0, Y: y(b) + 0.3}})
		}
		frame := draw.LineStyle{Color: color.Black, Width: vg.Points(0.6)}
		c.StrokeLines(frame, []vg.Point{{X: x0, Y: y(lo)}, {X: x0 + heatBarW, Y: y(lo)}, {X: x0 + heatBarW, Y: y(hi)}, {X: x0, Y: y(hi)}, {X: x0, Y: y(lo)}})
		ts := cdText(heatValueSize)
		ts.YAlign = draw.YCenter
		for _, t := range scaleTicks(lo, hi) {
			yt := y(t.Value)
			c.StrokeLine2(frame, x0+heatBarW, yt, x0+heatBarW+3, yt)
			c.FillText(ts, vg.Point{X: x0 + heatBarW + 5, Y: yt}, t.Label)
		}
	}
	return saveDrawing(path, width, height, paint)
}

// reversed returns s in reverse order (a nominal y-axis counts up from the
// bottom; the first row is drawn on top).
func reversed(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// scaleTicks returns 2 to 6 round values (multiples of 1, 2 or 5 × 10^k)
// within [lo, hi], labelled with as many decimals as the step needs.
func scaleTicks(lo, hi float64) []plot.Tick {
	span := hi - lo
	step := math.Pow(10, math.Floor(math.Log10(span)))
	for _, m := range []float64{0.1, 0.2, 0.5, 1, 2, 5, 10} {
		if span/(step*m) <= 5 {
			step *= m
			break
		}
	}
	dec := max(0, int(-math.Floor(math.Log10(step)+1e-9)))
	var out []plot.Tick
	for i := math.Ceil(lo/step - 1e-9); i*step <= hi+step*1e-9; i++ {
		v := i * step
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	return out
}
