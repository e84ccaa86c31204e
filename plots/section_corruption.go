package plots

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot/vg/draw"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/plots/analysis"
)

// corruptionBar is the bar of the corruption report: an estimate of a
// corruption's error within it (in percentage points, mean over
// corruptions) is good enough (issue #37).
const corruptionBar = 0.05

// corruption reports a corruption experiment (a corruptions scenario on a
// labelled classification table; see analysis.CorruptionProfile): per
// corruption and severity the top-1 error and violation rate of the
// exhaustive sweep, with a reference SUT (corruption.json) CE, mCE and
// relative mCE (Hendrycks & Dietterich, ICLR 2019), and how well each
// agent's follow-ups, and a stratified allocation of the same budget,
// estimate every corruption's error.
func (b *builder) corruption() error {
	if !strings.HasPrefix(b.scenarioName(), "corruptions") || b.detection || !b.labelled || b.e.Verdicts == nil {
		return nil
	}
	rows := b.scenarioRows(b.scenarioName())
	p, err := analysis.CorruptionProfileOf(rows)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	sev := func(s float64) string { return fmt.Sprintf("s%g", s) }
	b.p("## Common corruptions\n\n")
	b.p("The SUT's profile on the %d common corruptions (ImageNet-C/CIFAR-10-C, Hendrycks & Dietterich, ICLR 2019) at severities %g–%g, ",
		len(p.Corruptions), p.Severities[0], p.Severities[len(p.Severities)-1])
	b.p("from the exhaustive table (%d images, every corruption at every severity). E_{s,c} is the top-1 error on the follow-ups ", p.Images)
	b.p("of corruption c at severity s (prediction ≠ label), V_{s,c} the violation rate (prediction ≠ the source's), ")
	b.p("E_clean = %s the error on the source images; a corruption's error is its mean over severities.\n\n", pctUnit(p.Clean()))

	t := Table{Name: "corruption-error", Caption: "**Top-1 error (%) per corruption and severity** (E_{s,c}), its mean over severities, and the mean violation rate (%).",
		Header: []string{"corruption"}}
	for _, s := range p.Severities {
		t.Header = append(t.Header, sev(s))
	}
	t.Header = append(t.Header, "mean error", "mean violation")
	var bars []barSeries
	for _, s := range p.Severities {
		bars = append(bars, barSeries{Name: "severity " + fmt.Sprint(s)})
	}
	var meanE, meanV float64
	for c, name := range p.Corruptions {
		row := []string{name}
		for s := range p.Severities {
			row = append(row, pct(p.Error(c, s)))
			bars[s].Values = append(bars[s].Values, 100*p.Error(c, s))
		}
		meanE += p.CorruptionError(c) / float64(len(p.Corruptions))
		meanV += p.CorruptionViolation(c) / float64(len(p.Corruptions))
		t.Rows = append(t.Rows, append(row, pct(p.CorruptionError(c)), pct(p.CorruptionViolation(c))))
	}
	mean := []string{"mean"}
	for s := range p.Severities {
		sum := 0.0
		for c := range p.Corruptions {
			sum += p.Error(c, s)
		}
		mean = append(mean, pct(sum/float64(len(p.Corruptions))))
	}
	t.Rows = append(t.Rows, append(mean, pct(meanE), pct(meanV)))
	b.table(t)
	v := Table{Name: "corruption-violation", Caption: "**Violation rate (%) per corruption and severity** (V_{s,c}: the follow-up's class differs from the source's).",
		Header: []string{"corruption"}}
	for _, s := range p.Severities {
		v.Header = append(v.Header, sev(s))
	}
	for c, name := range p.Corruptions {
		row := []string{name}
		for s := range p.Severities {
			row = append(row, pct(p.Violation(c, s)))
		}
		v.Rows = append(v.Rows, row)
	}
	b.table(v)
	if err := b.corruptionChart("corruption-error", "Top-1 error per corruption and severity", "error (%)", p.Corruptions, bars,
		"top-1 error per corruption and severity"); err != nil {
		return err
	}

	if err := b.corruptionErrors(p); err != nil {
		return err
	}
	return b.corruptionEstimates(p, rows)
}

// corruptionErrors writes the CE table against the reference SUT of
// corruption.json; without one it says how to get it.
func (b *builder) corruptionErrors(p analysis.CorruptionProfile) error {
	c := b.e.Corruption
	if c == nil {
		b.p("No reference SUT (`%s`, written by a configuration with a `corruption:` section) in this folder: CE and mCE are left out.\n\n", record.CorruptionFile)
		return nil
	}
	ref, err := analysis.CorruptionProfileOf(b.scenarioRowsOf(b.e.VerdictsReference, b.scenarioName()))
	if err != nil {
		return fmt.Errorf("plots: %s: %w", record.VerdictsReferenceFile, err)
	}
	ces, mCE, relMCE, err := analysis.CorruptionErrors(p, ref)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	self, selfMCE, selfRel, err := analysis.CorruptionErrors(ref, ref)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	sut := "the SUT"
	if m := b.e.Meta; m != nil && m.SUT.Path != "" {
		sut = "`" + filepath.Base(m.SUT.Path) + "`"
	}
	refName := "`" + filepath.Base(c.Reference.Path) + "`"
	b.p("### Corruption errors against %s\n\n", refName)
	b.p("CE_c = Σ_s E_{s,c} / Σ_s E^ref_{s,c}, mCE their mean over corruptions; relative CE_c = Σ_s (E_{s,c} − E_clean) / Σ_s (E^ref_{s,c} − E^ref_clean), ")
	b.p("relative mCE its mean (Hendrycks & Dietterich, ICLR 2019). The reference is %s (sha256 %.12s…, clean error %s; its table is `%s`); ", refName, c.Reference.SHA256, pctUnit(ref.Clean()), record.VerdictsReferenceFile)
	b.p("its own row is the sanity check (100 %% wherever defined). A ratio whose reference sum is 0 is undefined (–) and left out of the mean.\n\n")
	t := Table{Name: "corruption-ce", Caption: fmt.Sprintf("**CE and relative CE (%%)** of %s and of the reference %s; errors are means over severities (%%).", sut, refName),
		Header: []string{"corruption", "error", "reference error", "CE", "relative CE", "reference CE", "reference relative CE"}}
	var model, reference barSeries
	model.Name, reference.Name, reference.Baseline = strings.Trim(sut, "`"), strings.Trim(refName, "`")+" (reference)", true
	for i, x := range ces {
		t.Rows = append(t.Rows, []string{x.Corruption, pct(p.CorruptionError(i)), pct(ref.CorruptionError(i)), pct(x.CE), pct(x.RelCE), pct(self[i].CE), pct(self[i].RelCE)})
		model.Values = append(model.Values, 100*x.CE)
		reference.Values = append(reference.Values, 100*self[i].CE)
	}
	t.Rows = append(t.Rows, []string{"clean", pct(p.Clean()), pct(ref.Clean()), "–", "–", "–", "–"})
	t.Rows = append(t.Rows, []string{"mCE / relative mCE", "–", "–", pct(mCE), pct(relMCE), pct(selfMCE), pct(selfRel)})
	b.table(t)
	b.p("%s: mCE %s, relative mCE %s against %s.\n\n", sut, pctUnit(mCE), pctUnit(relMCE), refName)
	return b.corruptionChart("corruption-ce", "Corruption error (CE) against the reference", "CE (%)", p.Corruptions, []barSeries{reference, model},
		"CE per corruption against the reference")
}

// corruptionEstimates sets each agent's estimate of every corruption's
// error (from all the follow-ups it chose, and from its audit sample when
// it had one) against the exhaustive profile, beside a simulated
// stratified allocation of the same budget.
func (b *builder) corruptionEstimates(p analysis.CorruptionProfile, rows []record.Verdict) error {
	var ests []analysis.ProfileEstimate
	var seeds []uint64
	budget := 0.0
	audited := false
	for _, a := range b.e.Agents {
		name := a.Name
		audit := len(a.Summary.Runs) > 0 && a.Summary.Runs[0].AuditErrors != nil
		if audit {
			name += ": all follow-ups"
		}
		est, err := p.AgentProfileEstimate(name, a.Summary.Runs)
		if err != nil {
			b.caveat("Agent `%s` gives no estimate of the corruption profile: %v", a.Name, err)
			continue
		}
		ests = append(ests, est)
		budget = max(budget, est.FollowUps)
		if audit {
			est, err := p.AuditProfileEstimate(a.Name+": audit sample", a.Summary.Runs)
			if err != nil {
				return fmt.Errorf("plots: %w", err)
			}
			ests = append(ests, est)
			audited = true
		}
		if seeds == nil {
			for _, r := range a.Summary.Runs {
				seeds = append(seeds, r.Seed)
			}
		}
	}
	if len(ests) == 0 {
		return nil
	}
	st, err := p.StratifiedEstimate(rows, int(math.Round(budget)), seeds)
	if err != nil {
		return fmt.Errorf("plots: %w", err)
	}
	ests = append(ests, st)
	cells := 0
	for c := range p.Corruptions {
		for s := range p.Severities {
			cells += p.N[c][s]
		}
	}
	b.p("### Estimating the profile at a budget\n\n")
	b.p("Each agent's runs (one per seed) chose %.0f follow-ups on average, %s of the %d of the exhaustive sweep. ", budget, pctUnit(budget/float64(cells)), cells)
	b.p("From them a run estimates each corruption's error: the mean over severities of its observed error rates when it tried every severity ")
	b.p("of the corruption (as the exhaustive profile averages them), else its error rate over the follow-ups of the corruption it tried, ")
	b.p("else (never tried) its error rate over all its follow-ups. The table gives |estimate − exhaustive| in percentage points, ")
	b.p("the mean over corruptions per run, then its mean over the %d seeds with a 95 %% t interval; likewise for the violation rate. ", len(seeds))
	b.p("*stratified (simulated)* spends the same budget evenly on every corruption × severity (drawn without replacement from the ")
	b.p("exhaustive rows, once per seed): the design-based yardstick. The bar of issue #37 is a mean error within %.0f pp.\n\n", 100*corruptionBar)
	if audited {
		b.p("With an audit sample (corruption.audit) a run spends that share of its follow-ups on a uniform corruption and severity, ")
		b.p("whatever the images and the verdicts, and the agent chooses the rest without seeing them. *agent: audit sample* estimates ")
		b.p("from the audit follow-ups alone, which are a uniform sample and so unbiased; *agent: all follow-ups* from every follow-up of ")
		b.p("the run, which the agent's search for violations biases towards the corruptions it found violating.\n\n")
	}
	t := Table{Name: "corruption-estimate", Caption: "**Estimated error profile against the exhaustive one**: mean absolute error over corruptions (pp), mean over seeds [95 % CI].",
		Header: []string{"estimator", "follow-ups per run", "share of the sweep (%)", "error MAE (pp)", "95 % CI", "worst seed (pp)", fmt.Sprintf("within %.0f pp", 100*corruptionBar), "violation MAE (pp)", "corruptions never tried"}}
	var bars []barSeries
	for _, e := range ests {
		me, mv := e.MAE()
		worst := 0.0
		for _, x := range e.RunMAE {
			worst = max(worst, x)
		}
		ok := "no"
		if me.Mean <= corruptionBar {
			ok = "yes"
		}
		ci := "–"
		if !math.IsNaN(me.Lo) {
			ci = fmt.Sprintf("[%s, %s]", pct(me.Lo), pct(me.Hi))
		}
		t.Rows = append(t.Rows, []string{e.Name, fmt.Sprintf("%.0f", e.FollowUps), pct(e.FollowUps / float64(cells)), pct(me.Mean), ci, pct(worst), ok, pct(mv.Mean), fmt.Sprintf("%.1f", e.Unseen)})
		s := barSeries{Name: e.Name}
		for _, x := range e.AbsErr {
			s.Values = append(s.Values, 100*x)
		}
		bars = append(bars, s)
	}
	b.table(t)
	pc := Table{Name: "corruption-estimate-per-corruption", Caption: "**Per corruption**: exhaustive error (%), then per estimator |estimate − exhaustive| (pp, mean over seeds) and its share of the follow-ups (%).",
		Header: []string{"corruption", "exhaustive error"}}
	for _, e := range ests {
		pc.Header = append(pc.Header, e.Name+" |err|", e.Name+" share")
	}
	for c, name := range p.Corruptions {
		row := []string{name, pct(p.CorruptionError(c))}
		for _, e := range ests {
			row = append(row, pct(e.AbsErr[c]), pct(e.Tried[c]))
		}
		pc.Rows = append(pc.Rows, row)
	}
	b.table(pc)
	return b.corruptionChart("corruption-estimate", "Error of the estimated corruption error, per corruption", "|estimate − exhaustive| (pp)", p.Corruptions, bars,
		"absolute error of each estimator per corruption")
}

// corruptionChart adds a bar chart over the corruptions (barChart),
// widened and with its category labels slanted so that the 18 long names
// do not overlap, with its caption.
func (b *builder) corruptionChart(stem, title, ylabel string, corruptions []string, bars []barSeries, caption string) error {
	f, err := barChart(stem, title, ylabel, corruptions, bars)
	if err != nil {
		return err
	}
	f.W *= 2
	f.Plot.X.Tick.Label.Rotation = math.Pi / 6
	f.Plot.X.Tick.Label.XAlign = draw.XRight
	f.Plot.X.Tick.Label.YAlign = draw.YTop
	b.figure(f, caption)
	return nil
}
