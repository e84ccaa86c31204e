package plots

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// GatePowerTarget is the power the study's budgets are read at: the
// smallest budget whose failure rate reaches it.
const GatePowerTarget = 0.9

// gatePowerLevel is the confidence level of the intervals (Wilson).
const gatePowerLevel = 0.95

// GatePowerCell is one pair, design and budget of a gate power study:
// Fails of N second checks failed, Right of those on the regressed
// relation, Only of those on it alone; Lo and Hi bound the failure rate
// (Wilson, 95 %).
type GatePowerCell struct {
	N, Fails, Right, Only int
	Lo, Hi                float64
}

// Rate is the failure rate.
func (c GatePowerCell) Rate() float64 {
	if c.N == 0 {
		return math.NaN()
	}
	return float64(c.Fails) / float64(c.N)
}

// GatePowerSummary is a study's outcomes counted per pair, design and
// budget (Cells[pair][method][budget]).
type GatePowerSummary struct {
	Study record.GatePower
	Cells map[string]map[string]map[int]GatePowerCell
}

// SummariseGatePower counts the outcomes of a study. Every outcome must
// belong to the study's pairs, designs and budgets, and every cell must
// have one outcome per cycle.
func SummariseGatePower(g record.GatePower, outs []record.GatePowerOutcome) (GatePowerSummary, error) {
	s := GatePowerSummary{Study: g, Cells: map[string]map[string]map[int]GatePowerCell{}}
	regressed := map[string]string{}
	for _, p := range g.Pairs {
		regressed[p.Name] = p.Regressed
		s.Cells[p.Name] = map[string]map[int]GatePowerCell{}
		for _, m := range g.Methods {
			s.Cells[p.Name][m] = map[int]GatePowerCell{}
		}
	}
	for _, o := range outs {
		byM, ok := s.Cells[o.Pair]
		if !ok || byM[o.Method] == nil || !slices.Contains(g.Budgets, o.Budget) {
			return s, fmt.Errorf("plots: gate power: outcome of pair %q, design %q, budget %d is not in the study", o.Pair, o.Method, o.Budget)
		}
		c := byM[o.Method][o.Budget]
		c.N++
		if len(o.Failed) > 0 {
			c.Fails++
			if r := regressed[o.Pair]; r != "" && slices.Contains(o.Failed, r) {
				c.Right++
				if len(o.Failed) == 1 {
					c.Only++
				}
			}
		}
		byM[o.Method][o.Budget] = c
	}
	for _, p := range g.Pairs {
		for _, m := range g.Methods {
			for _, b := range g.Budgets {
				c := s.Cells[p.Name][m][b]
				if c.N != len(g.Cycles) {
					return s, fmt.Errorf("plots: gate power: pair %s, design %s, budget %d has %d outcomes for %d cycles", p.Name, m, b, c.N, len(g.Cycles))
				}
				c.Lo, c.Hi = analysis.Wilson(c.Fails, c.N, gatePowerLevel)
				s.Cells[p.Name][m][b] = c
			}
		}
	}
	return s, nil
}

// BudgetFor returns the smallest budget of the study at which a design's
// failure rate on a pair reaches target, and false when none does.
func (s GatePowerSummary) BudgetFor(pair, method string, target float64) (int, bool) {
	for _, b := range s.Study.Budgets {
		if s.Cells[pair][method][b].Rate() >= target {
			return b, true
		}
	}
	return 0, false
}

// DefaultMethod is the design amt check runs as configured: random when
// its audit share is 1 (every follow-up an audit draw), the check agent
// without an audit at 0, the agent with an audit otherwise.
func (s GatePowerSummary) DefaultMethod() string {
	switch a := s.Study.CheckAudit; {
	case a >= 1:
		return "random"
	case a <= 0:
		return "adaptive"
	}
	return "adaptive+audit"
}

// FalseAlarmsOK reports whether every design's false-alarm rate on the
// no-change pairs is compatible with α at every budget: the lower end of
// its 95 % interval is at most α. It returns the designs that fail.
func (s GatePowerSummary) FalseAlarmsOK() map[string]bool {
	bad := map[string]bool{}
	for _, p := range s.Study.Pairs {
		if p.Regressed != "" {
			continue
		}
		for _, m := range s.Study.Methods {
			for _, b := range s.Study.Budgets {
				if s.Cells[p.Name][m][b].Lo > s.Study.Alpha {
					bad[m] = true
				}
			}
		}
	}
	return bad
}

// WriteGatePower reads a gate power study's folder (study.json,
// outcomes.csv) and writes its report.md and figures/power-<pair>.png and
// .svg: the failure rate of each design against the budget, with its 95 %
// interval. It returns the summary.
func WriteGatePower(dir string) (GatePowerSummary, error) {
	g, err := record.ReadGatePower(filepath.Join(dir, record.GatePowerFile))
	if err != nil {
		return GatePowerSummary{}, err
	}
	outs, err := record.ReadGatePowerOutcomes(filepath.Join(dir, record.GatePowerOutcomesFile))
	if err != nil {
		return GatePowerSummary{}, err
	}
	s, err := SummariseGatePower(g, outs)
	if err != nil {
		return s, err
	}
	for _, p := range g.Pairs {
		f, err := s.figure(p)
		if err != nil {
			return s, err
		}
		if err := f.write(filepath.Join(dir, "figures")); err != nil {
			return s, err
		}
	}
	return s, record.WriteFileAtomic(filepath.Join(dir, "report.md"), []byte(s.Report()))
}

// figure draws one pair's failure rates against the budget.
func (s GatePowerSummary) figure(p record.GatePowerPair) (figure, error) {
	g := s.Study
	var series []lineSeries
	x := make([]float64, len(g.Budgets))
	for i, b := range g.Budgets {
		x[i] = float64(b)
	}
	for _, m := range g.Methods {
		ls := lineSeries{Name: m, X: x, Points: true}
		for _, b := range g.Budgets {
			c := s.Cells[p.Name][m][b]
			ls.Y = append(ls.Y, 100*c.Rate())
			ls.Lo, ls.Hi = append(ls.Lo, 100*c.Lo), append(ls.Hi, 100*c.Hi)
		}
		series = append(series, ls)
	}
	ref, what := 100*GatePowerTarget, "power"
	refName := fmt.Sprintf("%g %% power", 100*GatePowerTarget)
	if p.Regressed == "" {
		ref, what = 100*g.Alpha, "false alarms"
		refName = fmt.Sprintf("α = %g", g.Alpha)
	}
	grey := color.NRGBA{0x66, 0x66, 0x66, 0xff}
	series = append(series, lineSeries{Name: refName, X: []float64{x[0], x[len(x)-1]}, Y: []float64{ref, ref}, Dashed: true, Color: &grey})
	title := fmt.Sprintf("%s: %s → %s (%s)", p.Name, strings.TrimSuffix(p.Old, ".onnx"), strings.TrimSuffix(p.New, ".onnx"), what)
	return lineChart("power-"+p.Name, title, "model runs per check", "failing checks (%)", series, 0, 100, false, wideWidth)
}

// Report returns the study's report.md.
func (s GatePowerSummary) Report() string {
	g := s.Study
	var b strings.Builder
	pct := func(c GatePowerCell) string {
		return fmt.Sprintf("%.0f %% [%.0f, %.0f]", 100*c.Rate(), 100*c.Lo, 100*c.Hi)
	}
	fmt.Fprintf(&b, "# Gate power study: %s\n\n", g.Experiment)
	fmt.Fprintf(&b, "Does `amt check` catch regressions without false alarms? Each CI cycle replays examples/ci/amt-check.sh "+
		"in memory from the models' cached sweeps: a check of the old model with a fresh agent, which saves its state and "+
		"results; then a check of the new model that continues from that state with the first check's results as the baseline. "+
		"The regression conditions (margin %g pp, α = %g, one-sided exact stratified tests, Holm-adjusted over the %d MRs of %s) "+
		"decide. %d cycles (seeds %s) per pair, design and budget; %d images of %s; the check agent is %s%s; contexts: %s.\n\n",
		g.MarginPP, g.Alpha, len(g.Relations), g.Scenario, len(g.Cycles), seedRange(g.Cycles), g.Images, g.Data.Path, g.Agent, optionText(g.AgentOptions), g.Features)
	fmt.Fprintf(&b, "Designs (how each check chooses its follow-ups, and what the regression test compares):\n\n")
	fmt.Fprintf(&b, "- `adaptive`: the check agent chooses every follow-up; the test compares all of them (amt check before the audit sample).\n")
	fmt.Fprintf(&b, "- `adaptive+audit`: %.0f %% of the budget is a uniform audit sample, the agent chooses the rest; the test compares the audit samples.\n", 100*g.Audit)
	fmt.Fprintf(&b, "- `random`: every follow-up a uniform draw (a uniform MR, then a uniform parameter value); the test compares all (check.audit 1).\n")
	fmt.Fprintf(&b, "- `round-robin`: the MRs in turn, each MR's parameter values in turn, the position carried from check to check; the test compares all.\n\n")
	fmt.Fprintf(&b, "amt check's design as configured (check.audit %g) is **%s**.\n\n", g.CheckAudit, s.DefaultMethod())
	fmt.Fprintf(&b, "Pairs:\n\n| pair | old → new | second check's seed | expected |\n|---|---|---|---|\n")
	for _, p := range g.Pairs {
		seed := "the cycle's (as the first)"
		if p.Reseed {
			seed = "another (derived from the cycle's)"
		}
		exp := "pass (no change)"
		if p.Regressed != "" {
			exp = "fail on " + p.Regressed
		}
		fmt.Fprintf(&b, "| %s | %s → %s | %s | %s |\n", p.Name, p.Old, p.New, seed, exp)
	}
	b.WriteString("\n## Failing checks\n\nThe share of cycles whose second check failed, with its 95 % Wilson interval: the false-alarm rate " +
		"for a pair without change, the power for a regression.\n\n")
	head := "| design |"
	sep := "|---|"
	for _, bu := range g.Budgets {
		head += fmt.Sprintf(" %d |", bu)
		sep += "---|"
	}
	for _, p := range g.Pairs {
		what := "false alarms"
		if p.Regressed != "" {
			what = "power"
		}
		fmt.Fprintf(&b, "### %s (%s → %s): %s\n\n%s\n%s\n", p.Name, p.Old, p.New, what, head, sep)
		for _, m := range g.Methods {
			fmt.Fprintf(&b, "| %s |", m)
			for _, bu := range g.Budgets {
				fmt.Fprintf(&b, " %s |", pct(s.Cells[p.Name][m][bu]))
			}
			b.WriteString("\n")
		}
		if p.Regressed != "" {
			fmt.Fprintf(&b, "\nFailing checks that fail on %s (of those, on %s alone):\n\n%s\n%s\n", p.Regressed, p.Regressed, head, sep)
			for _, m := range g.Methods {
				fmt.Fprintf(&b, "| %s |", m)
				for _, bu := range g.Budgets {
					c := s.Cells[p.Name][m][bu]
					if c.Fails == 0 {
						b.WriteString(" – |")
						continue
					}
					fmt.Fprintf(&b, " %d/%d = %.0f %% (%d) |", c.Right, c.Fails, 100*float64(c.Right)/float64(c.Fails), c.Only)
				}
				b.WriteString("\n")
			}
		}
		fmt.Fprintf(&b, "\n![%s](figures/power-%s.png)\n\n", p.Name, p.Name)
	}
	fmt.Fprintf(&b, "## Model runs for %.0f %% power\n\nThe smallest budget (model runs per check) at which the failure rate reaches %.0f %% (– : none up to %d).\n\n",
		100*GatePowerTarget, 100*GatePowerTarget, g.Budgets[len(g.Budgets)-1])
	b.WriteString("| design |")
	for _, p := range g.Pairs {
		if p.Regressed != "" {
			fmt.Fprintf(&b, " %s |", p.Name)
		}
	}
	b.WriteString("\n|---|")
	for _, p := range g.Pairs {
		if p.Regressed != "" {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, m := range g.Methods {
		fmt.Fprintf(&b, "| %s |", m)
		for _, p := range g.Pairs {
			if p.Regressed == "" {
				continue
			}
			if bu, ok := s.BudgetFor(p.Name, m, GatePowerTarget); ok {
				fmt.Fprintf(&b, " %d |", bu)
			} else {
				b.WriteString(" – |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Verdict\n\n")
	bad := s.FalseAlarmsOK()
	for _, m := range g.Methods {
		worst, at, pair := -1.0, 0, ""
		for _, p := range g.Pairs {
			if p.Regressed != "" {
				continue
			}
			for _, bu := range g.Budgets {
				if r := s.Cells[p.Name][m][bu].Rate(); r > worst {
					worst, at, pair = r, bu, p.Name
				}
			}
		}
		ok := "compatible with α at every budget (the lower end of every interval ≤ α)"
		if bad[m] {
			ok = "**above α** (an interval lies above α)"
		}
		fmt.Fprintf(&b, "- `%s`: false alarms %s; the highest, %.0f %%, on %s at %d runs.", m, ok, 100*worst, pair, at)
		for _, p := range g.Pairs {
			if p.Regressed == "" {
				continue
			}
			if bu, ok := s.BudgetFor(p.Name, m, GatePowerTarget); ok {
				c := s.Cells[p.Name][m][bu]
				fmt.Fprintf(&b, " %s: %.0f %% power at %d runs, %d/%d failing checks on %s.", p.Name, 100*c.Rate(), bu, c.Right, c.Fails, p.Regressed)
			} else {
				fmt.Fprintf(&b, " %s: below %.0f %% power at every budget.", p.Name, 100*GatePowerTarget)
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// seedRange formats cycle seeds as "1-100" when they are consecutive.
func seedRange(s []uint64) string {
	if len(s) == 0 {
		return "none"
	}
	consecutive := true
	for i := 1; i < len(s); i++ {
		consecutive = consecutive && s[i] == s[i-1]+1
	}
	if consecutive && len(s) > 1 {
		return fmt.Sprintf("%d-%d", s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}

// optionText formats agent options as " (k=v, …)", "" for none.
func optionText(o map[string]string) string {
	if len(o) == 0 {
		return ""
	}
	return " (" + optionsList(o) + ")"
}

// optionsList writes agent options as k=v, sorted by key ("defaults" for
// none).
func optionsList(o map[string]string) string {
	if len(o) == 0 {
		return "defaults"
	}
	keys := slices.Sorted(maps.Keys(o))
	for i, k := range keys {
		keys[i] = k + "=" + o[k]
	}
	return strings.Join(keys, ", ")
}
