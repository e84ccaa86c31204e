package plots

import (
	"math"
	"testing"
)

func TestTableEncodings(t *testing.T) {
	tb := Table{Name: "t1", Caption: "Rates (%) for rotation ±30° & shear_20",
		Header: []string{"MR", "rate", "note"},
		Rows:   [][]string{{"Flip L/R", "3.07", "a|b"}, {"Rotation", "–", "x"}, {"Shear", "+1.50", ""}}}
	if got, want := string(tb.Markdown()), "| MR | rate | note |\n| :--- | ---: | :--- |\n| Flip L/R | 3.07 | a\\|b |\n| Rotation | – | x |\n| Shear | +1.50 |  |\n"; got != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", got, want)
	}
	if got, want := string(tb.CSV()), "MR,rate,note\nFlip L/R,3.07,a|b\nRotation,,x\nShear,+1.50,\n"; got != want {
		t.Errorf("csv:\n%s\nwant:\n%s", got, want)
	}
	want := "\\begin{table}[t]\n  \\centering\n  \\small\n  \\begin{tabular}{lrl}\n  \\toprule\n" +
		"  MR & rate & note \\\\\n  \\midrule\n  Flip L/R & 3.07 & a\\textbar{}b \\\\\n  Rotation & -- & x \\\\\n  Shear & +1.50 &  \\\\\n" +
		"  \\bottomrule\n  \\end{tabular}\n  \\caption{Rates (\\%) for rotation $\\pm$30$^\\circ$ \\& shear\\_20}\n  \\label{tab:t1}\n\\end{table}\n"
	if got := string(tb.LaTeX()); got != want {
		t.Errorf("latex:\n%s\nwant:\n%s", got, want)
	}
}

func TestFormatters(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{pct(0.4043), "40.43"}, {pct(math.NaN()), "–"}, {num(30.7), "30.70"},
		{signed(1.2), "+1.20"}, {signed(-0.35), "-0.35"}, {signed(0.001), "0.00"}, {signed(math.NaN()), "–"},
		{pctUnit(0.5), "50.00 %"}, {pctUnit(math.NaN()), "–"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestNiceCeilAndTicks(t *testing.T) {
	for _, tc := range []struct{ in, want float64 }{{73.2, 80}, {80, 80}, {7.2, 8}, {0.43, 0.5}, {0, 0}, {math.NaN(), 0}} {
		if got := niceCeil(tc.in); got != tc.want {
			t.Errorf("niceCeil(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	ticks := stepTicks{}.Ticks(0, 80)
	if len(ticks) != 9 || ticks[1].Value != 10 || ticks[8].Label != "80" {
		t.Errorf("ticks 0..80: %+v", ticks)
	}
	if d := (degreeTicks{step: 15}).Ticks(-90, 90); len(d) != 13 || d[0].Label != "-90°" {
		t.Errorf("degree ticks: %+v", d)
	}
}
