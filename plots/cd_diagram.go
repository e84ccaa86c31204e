package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// The critical-difference diagram of Demšar, "Statistical Comparisons of
// Classifiers over Multiple Data Sets", JMLR 7 (2006), Figs. 1 and 2, as
// Orange's graph_ranks draws it: an axis of mean ranks with the best, rank
// 1, on the LEFT (reading order; Demšar's figures put it on the right),
// each algorithm a tick at its mean rank joined by a leader line to its
// name (the better half named on the left, the worse half on the right;
// the algorithms nearest the ends of the axis get the shortest leaders so
// that no two lines cross), a bar of length CD above the axis, and thick
// bars under the axis joining each maximal group of algorithms whose mean
// ranks differ by less than CD, which the Nemenyi test cannot tell apart
// (disjoint groups share a level, as Orange packs them).

// Layout of the CD diagram, in points.
const (
	cdMargin     = 10  // around everything
	cdTitleSize  = 13  // as newPlot's titles
	cdNameSize   = 10  // algorithm names
	cdTickSize   = 9   // rank labels and "CD"
	cdRowH       = 17  // vertical step between leader lines
	cdGroupH     = 7   // vertical step between group bars
	cdGroupW     = 3.2 // group bar thickness
	cdLeaderGap  = 14  // leader lines end this far beyond the axis ends
	cdNameGap    = 4   // between a leader's end and its name
	cdMinRankW   = 44  // minimum width of one rank unit on the axis
	cdGroupInset = 3   // group bars extend this far beyond their end ranks
)

// cdGroups returns the groups of algorithms that the Nemenyi test cannot
// tell apart: with the algorithms sorted by mean rank (ties by index),
// the consecutive ones i..j form a group when rank[j] − rank[i] < cd
// (Demšar: two mean ranks differ significantly when they differ by at
// least CD). Only the maximal groups of at least two algorithms are kept;
// a group inside another is dropped. Each group lists the algorithms'
// indices in ascending rank, and the groups come in the order of their
// first member.
func cdGroups(ranks []float64, cd float64) [][]int {
	order := rankOrder(ranks)
	var out [][]int
	prevEnd := -1
	for i := range order {
		j := i
		for j+1 < len(order) && ranks[order[j+1]]-ranks[order[i]] < cd {
			j++
		}
		// j is non-decreasing in i, so (i, j) lies inside an earlier
		// group exactly when the previous end reached j already.
		if j > i && j > prevEnd {
			out = append(out, append([]int(nil), order[i:j+1]...))
		}
		prevEnd = max(prevEnd, j)
	}
	return out
}

// rankOrder returns the indices of ranks in ascending rank, ties by index.
func rankOrder(ranks []float64) []int {
	order := make([]int, len(ranks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return ranks[order[a]] < ranks[order[b]] })
	return order
}

func cdText(size vg.Length) draw.TextStyle {
	return draw.TextStyle{Color: color.Black, Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
}

// CDDiagram draws Demšar's critical-difference diagram (Figs. 1 and 2 of
// his paper) with gonum/plot: an axis of ranks 1..K with the best, rank 1,
// on the LEFT; each algorithm a tick at its mean rank with its name on a
// leader line (the better half named on the left, the rest on the right);
// a bar of length cd above the axis labelled "CD"; and thick horizontal
// bars joining the maximal groups of consecutive algorithms whose mean
// ranks differ by less than cd (see cdGroups). names and meanRanks are in
// the same order (as analysis.MeanRanks gives them) and cd is typically
// analysis.NemenyiCD(K, N, 0.05); cd = 0 draws neither the CD bar nor any
// group. It writes an SVG when path ends in .svg and a PNG otherwise; the
// same input gives the same bytes.
func CDDiagram(path, title string, names []string, meanRanks []float64, cd float64) error {
	k := len(names)
	if k < 2 || len(meanRanks) != k {
		return fmt.Errorf("plots: CD diagram %s: %d names and %d mean ranks, need the same number, at least 2", path, k, len(meanRanks))
	}
	lo, hi := 1.0, float64(k) // the axis: at least 1..K
	for i, r := range meanRanks {
		if math.IsNaN(r) || math.IsInf(r, 0) {
			return fmt.Errorf("plots: CD diagram %s: mean rank of %q is %v", path, names[i], r)
		}
		lo, hi = math.Min(lo, math.Floor(r)), math.Max(hi, math.Ceil(r))
	}
	if !(cd >= 0) || math.IsInf(cd, 0) {
		return fmt.Errorf("plots: CD diagram %s: critical difference %v", path, cd)
	}
	order := rankOrder(meanRanks)
	groups := cdGroups(meanRanks, cd)
	half := (k + 1) / 2 // the better half, named on the left

	titleSty, nameSty, tickSty := cdText(cdTitleSize), cdText(cdNameSize), cdText(cdTickSize)
	var leftW, rightW vg.Length
	for i, a := range order {
		if w := nameSty.Width(names[a]); i < half {
			leftW = max(leftW, w)
		} else {
			rightW = max(rightW, w)
		}
	}
	// Width: the names on both sides, and at least cdMinRankW per rank.
	side := func(w vg.Length) vg.Length { return cdMargin + w + cdNameGap + cdLeaderGap }
	axisW := max(vg.Length(hi-lo)*cdMinRankW, wideWidth-side(leftW)-side(rightW))
	width := side(leftW) + axisW + side(rightW)
	rows := half // leader rows below the group bars
	var titleH vg.Length
	if title != "" {
		titleH = titleSty.Height(title) + 6
	}
	cdH := vg.Length(0)
	if cd > 0 {
		cdH = tickSty.Height("CD") + 10
	}
	tickLabelH := tickSty.Height("0") + 8
	// Each group bar goes on the first level where it clears the bars
	// already there (as Orange packs them), so disjoint groups share one.
	perRank := axisW / vg.Length(hi-lo)
	level := make([]int, len(groups))
	var ends []float64 // the last bar's end rank, per level
	for g, m := range groups {
		start := meanRanks[m[0]]
		level[g] = len(ends)
		for l, e := range ends {
			if vg.Length(start-e)*perRank > 2*cdGroupInset+4 {
				level[g] = l
				break
			}
		}
		if level[g] == len(ends) {
			ends = append(ends, 0)
		}
		ends[level[g]] = meanRanks[m[len(m)-1]]
	}
	groupsH := vg.Length(len(ends)) * cdGroupH
	height := cdMargin + titleH + cdH + tickLabelH + 6 + groupsH + vg.Length(rows)*cdRowH + cdMargin

	paint := func(c draw.Canvas) {
		c.FillPolygon(color.White, []vg.Point{{X: 0, Y: 0}, {X: width, Y: 0}, {X: width, Y: height}, {X: 0, Y: height}})
		x0 := c.Min.X + side(leftW)
		x := func(r float64) vg.Length { return x0 + vg.Length((r-lo)/(hi-lo))*axisW }
		y := c.Max.Y - cdMargin // moves down as things are drawn
		thin := draw.LineStyle{Color: color.Black, Width: vg.Points(0.8)}
		if title != "" {
			s := titleSty
			s.XAlign, s.YAlign = draw.XCenter, draw.YTop
			c.FillText(s, vg.Point{X: (c.Min.X + c.Max.X) / 2, Y: y}, title)
			y -= titleH
		}
		if cd > 0 {
			// The CD bar from rank lo to lo+cd, its label centred above.
			s := tickSty
			s.XAlign, s.YAlign = draw.XCenter, draw.YTop
			c.FillText(s, vg.Point{X: (x(lo) + x(lo+cd)) / 2, Y: y}, "CD")
			y -= cdH - 3
			c.StrokeLine2(thin, x(lo), y, x(lo+cd), y)
			c.StrokeLine2(thin, x(lo), y-3, x(lo), y+3)
			c.StrokeLine2(thin, x(lo+cd), y-3, x(lo+cd), y+3)
			y -= 7
		}
		// The axis: labels above, ticks down (half ranks shorter).
		s := tickSty
		s.XAlign, s.YAlign = draw.XCenter, draw.YTop
		for r := lo; r <= hi+1e-9; r++ {
			c.FillText(s, vg.Point{X: x(r), Y: y}, strconv.Itoa(int(r)))
		}
		y -= tickLabelH
		axisY := y
		c.StrokeLine2(thin, x(lo), axisY, x(hi), axisY)
		for r := lo; r <= hi+1e-9; r += 0.5 {
			l := vg.Length(5)
			if r != math.Trunc(r) {
				l = 3
			}
			c.StrokeLine2(thin, x(r), axisY, x(r), axisY+l)
		}
		y -= 6
		groupsTop := y
		// Leader lines: the i-th best of the left half down to row i, the
		// i-th worst of the right half down to row i.
		rowY := func(row int) vg.Length { return groupsTop - groupsH - cdRowH*vg.Length(row) - cdRowH/2 }
		leader := draw.LineStyle{Color: color.Black, Width: vg.Points(0.9)}
		ns := nameSty
		ns.YAlign = draw.YCenter
		for i, a := range order {
			row, left := i, i < half
			if !left {
				row = k - 1 - i
			}
			xr, yr := x(meanRanks[a]), rowY(row)
			end := x(lo) - cdLeaderGap
			if !left {
				end = x(hi) + cdLeaderGap
			}
			c.StrokeLines(leader, []vg.Point{{X: xr, Y: axisY}, {X: xr, Y: yr}, {X: end, Y: yr}})
			if left {
				ns.XAlign = draw.XRight
				c.FillText(ns, vg.Point{X: end - cdNameGap, Y: yr}, names[a])
			} else {
				ns.XAlign = draw.XLeft
				c.FillText(ns, vg.Point{X: end + cdNameGap, Y: yr}, names[a])
			}
		}
		// Group bars, over the leader lines.
		bar := draw.LineStyle{Color: color.Black, Width: vg.Points(cdGroupW)}
		for g, m := range groups {
			yg := groupsTop - cdGroupH*vg.Length(level[g]) - cdGroupH/2
			c.StrokeLine2(bar, x(meanRanks[m[0]])-cdGroupInset, yg, x(meanRanks[m[len(m)-1]])+cdGroupInset, yg)
		}
	}
	return saveDrawing(path, width, height, paint)
}
