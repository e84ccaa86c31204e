package plots

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Table is a rectangular table of already formatted cells that can be
// written as Markdown, CSV and LaTeX (booktabs). Cells are plain text; the
// encoders escape what their format needs.
type Table struct {
	Name    string // file stem, e.g. "rq1-violation-rate-per-mr"
	Caption string
	Header  []string
	Rows    [][]string
}

// numeric reports whether every cell of column i is a number or empty
// ("–"), so the column is right-aligned.
func (t Table) numeric(i int) bool {
	for _, r := range t.Rows {
		if i >= len(r) || r[i] == "–" || r[i] == "" {
			continue
		}
		if _, err := strconv.ParseFloat(strings.TrimPrefix(r[i], "+"), 64); err != nil {
			return false
		}
	}
	return true
}

// Markdown returns the table as a GitHub-flavoured Markdown table. The
// first column and columns of text are left-aligned, numeric columns
// right-aligned.
func (t Table) Markdown() []byte {
	var b bytes.Buffer
	esc := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	row := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" " + esc(c) + " |")
		}
		b.WriteString("\n")
	}
	row(t.Header)
	b.WriteString("|")
	for i := range t.Header {
		if i == 0 || !t.numeric(i) {
			b.WriteString(" :--- |")
		} else {
			b.WriteString(" ---: |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		row(r)
	}
	return b.Bytes()
}

// CSV returns the table as CSV with the header as the first record; cells
// that mark missing data ("–") are written empty.
func (t Table) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(t.Header)
	for _, r := range t.Rows {
		rec := make([]string, len(r))
		for i, c := range r {
			if c != "–" {
				rec[i] = c
			}
		}
		w.Write(rec)
	}
	w.Flush() // writes to a bytes.Buffer cannot fail
	return b.Bytes()
}

// LaTeX returns the table as a booktabs tabular (in a table environment
// with the caption) that \input can include.
func (t Table) LaTeX() []byte {
	var b bytes.Buffer
	b.WriteString("\\begin{table}[t]\n  \\centering\n  \\small\n")
	align := "l"
	for i := 1; i < len(t.Header); i++ {
		if t.numeric(i) {
			align += "r"
		} else {
			align += "l"
		}
	}
	fmt.Fprintf(&b, "  \\begin{tabular}{%s}\n  \\toprule\n", align)
	row := func(cells []string) {
		esc := make([]string, len(cells))
		for i, c := range cells {
			esc[i] = latexEscape(c)
		}
		b.WriteString("  " + strings.Join(esc, " & ") + " \\\\\n")
	}
	row(t.Header)
	b.WriteString("  \\midrule\n")
	for _, r := range t.Rows {
		row(r)
	}
	b.WriteString("  \\bottomrule\n  \\end{tabular}\n")
	if t.Caption != "" {
		fmt.Fprintf(&b, "  \\caption{%s}\n", latexEscape(t.Caption))
	}
	if t.Name != "" {
		fmt.Fprintf(&b, "  \\label{tab:%s}\n", t.Name)
	}
	b.WriteString("\\end{table}\n")
	return b.Bytes()
}

var latexReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`,
	"±", `$\pm$`, "°", `$^\circ$`, "−", `$-$`, "–", `--`, "≥", `$\geq$`, "≤", `$\leq$`, "|", `\textbar{}`, "µ", `$\mu$`,
)

func latexEscape(s string) string { return latexReplacer.Replace(s) }

// pct formats a fraction as a percentage with two decimals ("40.43"), or
// "–" for NaN (no data).
func pct(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.2f", 100*f)
}

// pctUnit formats a fraction as "40.43 %", or "–" for NaN.
func pctUnit(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return pct(f) + " %"
}

// num formats a value with two decimals, or "–" for NaN.
func num(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	return fmt.Sprintf("%.2f", f)
}

// signed formats a difference with an explicit sign ("+1.20", "-0.35"), or
// "–" for NaN.
func signed(f float64) string {
	if math.IsNaN(f) {
		return "–"
	}
	if math.Abs(f) < 0.005 {
		return "0.00"
	}
	if f < 0 {
		return fmt.Sprintf("-%.2f", -f)
	}
	return fmt.Sprintf("+%.2f", f)
}
