package analysis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/amt-dev/amt/experiments/record"
)

// The corruption report's numbers (issue #37) follow Hendrycks &
// Dietterich, "Benchmarking Neural Network Robustness to Common
// Corruptions and Perturbations", ICLR 2019 (ImageNet-C, CIFAR-10-C). For a
// classifier f, corruption c and severity s:
//
//	E^f_{s,c}   top-1 error on the follow-ups of c at s (prediction ≠ label)
//	E^f_clean   top-1 error on the source images
//	CE^f_c      = Σ_s E^f_{s,c} / Σ_s E^ref_{s,c}
//	mCE^f       = mean over c of CE^f_c
//	relCE^f_c   = Σ_s (E^f_{s,c} − E^f_clean) / Σ_s (E^ref_{s,c} − E^ref_clean)
//	rel. mCE^f  = mean over c of relCE^f_c
//
// where ref is the reference classifier (AlexNet in the paper; the
// configuration's corruption.reference here). Beside the error, amt's
// metamorphic verdict gives the violation rate V^f_{s,c}: the share of
// follow-ups whose class differs from the source's.

// CorruptionProfile is a classifier's exhaustive profile on the common
// corruptions: per corruption and severity the follow-ups, their errors
// and their violations, from a labelled classification verdict table.
type CorruptionProfile struct {
	// Corruptions are the table's parameterised MRs in the order of their
	// first row (the scenario's order); Severities the parameter values,
	// ascending.
	Corruptions []string
	Severities  []float64
	// N, Errors and Violations are indexed [corruption][severity].
	N, Errors, Violations [][]int
	// Images are the source images and CleanErrors those the classifier
	// gets wrong (E_clean = CleanErrors / Images).
	Images, CleanErrors int
}

// CorruptionProfileOf computes the profile of a classification table's
// parameterised rows. It fails on a table without labels or
// parameterised rows, or with a corruption missing a severity.
func CorruptionProfileOf(rows []record.Verdict) (CorruptionProfile, error) {
	var p CorruptionProfile
	ci := map[string]int{}
	sevs := map[float64]bool{}
	clean := map[int]bool{} // image → wrong on the source
	for _, v := range rows {
		if !v.HasParam() {
			continue
		}
		if v.Label < 0 {
			return p, fmt.Errorf("analysis: corruption profile: image %d has no label (top-1 errors need labels)", v.Image)
		}
		if _, ok := ci[v.MR]; !ok {
			ci[v.MR] = len(p.Corruptions)
			p.Corruptions = append(p.Corruptions, v.MR)
		}
		sevs[v.Param] = true
		clean[v.Image] = v.PredOriginal != v.Label
	}
	if len(p.Corruptions) == 0 {
		return p, fmt.Errorf("analysis: corruption profile: no parameterised rows")
	}
	p.Severities = SortedKeys(sevs)
	si := map[float64]int{}
	for i, s := range p.Severities {
		si[s] = i
	}
	p.N, p.Errors, p.Violations = grid(len(p.Corruptions), len(p.Severities)), grid(len(p.Corruptions), len(p.Severities)), grid(len(p.Corruptions), len(p.Severities))
	for _, v := range rows {
		if !v.HasParam() {
			continue
		}
		c, s := ci[v.MR], si[v.Param]
		p.N[c][s]++
		if v.PredTransformed != v.Label {
			p.Errors[c][s]++
		}
		if v.Violation {
			p.Violations[c][s]++
		}
	}
	for c, name := range p.Corruptions {
		for s, sev := range p.Severities {
			if p.N[c][s] == 0 {
				return p, fmt.Errorf("analysis: corruption profile: %s has no rows at severity %g", name, sev)
			}
		}
	}
	p.Images = len(clean)
	for _, wrong := range clean {
		if wrong {
			p.CleanErrors++
		}
	}
	return p, nil
}

func grid(r, c int) [][]int {
	out := make([][]int, r)
	for i := range out {
		out[i] = make([]int, c)
	}
	return out
}

// Error returns E_{s,c}, the error rate of corruption c at severity index s.
func (p CorruptionProfile) Error(c, s int) float64 { return ratio(p.Errors[c][s], p.N[c][s]) }

// Violation returns V_{s,c}, the violation rate of corruption c at severity
// index s.
func (p CorruptionProfile) Violation(c, s int) float64 { return ratio(p.Violations[c][s], p.N[c][s]) }

// Clean returns E_clean, the error rate on the source images.
func (p CorruptionProfile) Clean() float64 { return ratio(p.CleanErrors, p.Images) }

// CorruptionError returns corruption c's error averaged over severities,
// (1/S) Σ_s E_{s,c}: the profile an agent's estimate is set against.
func (p CorruptionProfile) CorruptionError(c int) float64 {
	sum := 0.0
	for s := range p.Severities {
		sum += p.Error(c, s)
	}
	return sum / float64(len(p.Severities))
}

// CorruptionViolation returns corruption c's violation rate averaged over
// severities.
func (p CorruptionProfile) CorruptionViolation(c int) float64 {
	sum := 0.0
	for s := range p.Severities {
		sum += p.Violation(c, s)
	}
	return sum / float64(len(p.Severities))
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// CE is one corruption's corruption error and relative corruption error
// against a reference (fractions: 1 = 100 %).
type CE struct {
	Corruption string
	CE, RelCE  float64
}

// CorruptionErrors returns CE_c and relCE_c of every corruption of f
// against ref (the formulas at the top of this file), and their means, mCE
// and relative mCE. Both profiles must list the same corruptions and
// severities. A corruption whose reference sum is 0 (the reference never
// errs on it, or for relCE never errs more than on clean images) has an
// undefined ratio, NaN, and is left out of the means (which are NaN when
// every corruption is).
func CorruptionErrors(f, ref CorruptionProfile) (ces []CE, mCE, relMCE float64, err error) {
	if !slices.Equal(f.Corruptions, ref.Corruptions) || !slices.Equal(f.Severities, ref.Severities) {
		return nil, 0, 0, fmt.Errorf("analysis: corruption errors: the model's corruptions %v × severities %v differ from the reference's %v × %v",
			f.Corruptions, f.Severities, ref.Corruptions, ref.Severities)
	}
	var sumCE, sumRel float64
	var nCE, nRel int
	for c, name := range f.Corruptions {
		var ef, er, rf, rr float64
		for s := range f.Severities {
			ef += f.Error(c, s)
			er += ref.Error(c, s)
			rf += f.Error(c, s) - f.Clean()
			rr += ref.Error(c, s) - ref.Clean()
		}
		x := CE{Corruption: name, CE: math.NaN(), RelCE: math.NaN()}
		if er != 0 {
			x.CE = ef / er
			sumCE += x.CE
			nCE++
		}
		if rr != 0 {
			x.RelCE = rf / rr
			sumRel += x.RelCE
			nRel++
		}
		ces = append(ces, x)
	}
	return ces, ratio64(sumCE, nCE), ratio64(sumRel, nRel), nil
}

func ratio64(a float64, n int) float64 {
	if n == 0 {
		return math.NaN()
	}
	return a / float64(n)
}

// ProfileEstimate is how well an allocation of a follow-up budget
// estimates the exhaustive profile: per corruption the absolute error of
// the estimated error rate (and of the violation rate) against
// CorruptionError (CorruptionViolation), averaged over the runs (seeds),
// and per run the mean over corruptions.
type ProfileEstimate struct {
	Name string
	// FollowUps is the mean budget of a run.
	FollowUps float64
	// AbsErr and AbsErrViolation are indexed by corruption (the
	// profile's order): the mean over runs of |estimate − exhaustive|.
	AbsErr, AbsErrViolation []float64
	// RunMAE and RunMAEViolation are each run's mean over corruptions
	// of that absolute error, in the runs' order.
	RunMAE, RunMAEViolation []float64
	// Unseen is the mean number of corruptions a run never tried; Tried
	// the mean share of a run's follow-ups per corruption, indexed by
	// corruption.
	Unseen float64
	Tried  []float64
}

// MAE returns the mean over runs of the mean absolute error over
// corruptions of the error-rate estimate, and of the violation-rate one,
// with their 95 % Student-t intervals over runs.
func (e ProfileEstimate) MAE() (errRate, violation CI) {
	return MeanCI(e.RunMAE, Level95), MeanCI(e.RunMAEViolation, Level95)
}

// cellCounts are the follow-ups one run spent per corruption and severity,
// with their errors and violations ([corruption][severity]).
type cellCounts struct{ n, errs, viol [][]int }

// estimate returns a run's estimated error and violation rate of every
// corruption from its counts: the mean over severities of the observed
// rates when the run tried every severity of the corruption (stratified by
// severity, as the exhaustive profile averages them), else its pooled rate
// over the severities it tried, else (never tried) the run's pooled rate
// over all its follow-ups, the best guess it has.
func (p CorruptionProfile) estimate(cc cellCounts) (errs, viol []float64, unseen int) {
	var tn, te, tv int
	for c := range p.Corruptions {
		for s := range p.Severities {
			tn += cc.n[c][s]
			te += cc.errs[c][s]
			tv += cc.viol[c][s]
		}
	}
	for c := range p.Corruptions {
		var n, e, v, seen int
		var me, mv float64
		for s := range p.Severities {
			if cc.n[c][s] > 0 {
				seen++
				me += ratio(cc.errs[c][s], cc.n[c][s])
				mv += ratio(cc.viol[c][s], cc.n[c][s])
			}
			n += cc.n[c][s]
			e += cc.errs[c][s]
			v += cc.viol[c][s]
		}
		switch {
		case seen == len(p.Severities):
			errs, viol = append(errs, me/float64(seen)), append(viol, mv/float64(seen))
		case n > 0:
			errs, viol = append(errs, ratio(e, n)), append(viol, ratio(v, n))
		default:
			unseen++
			errs, viol = append(errs, ratio(te, tn)), append(viol, ratio(tv, tn))
		}
	}
	return errs, viol, unseen
}

// summarise turns every run's counts into a ProfileEstimate.
func (p CorruptionProfile) summarise(name string, runs []cellCounts) ProfileEstimate {
	nc := len(p.Corruptions)
	out := ProfileEstimate{Name: name, AbsErr: make([]float64, nc), AbsErrViolation: make([]float64, nc), Tried: make([]float64, nc)}
	for _, cc := range runs {
		errs, viol, unseen := p.estimate(cc)
		var mae, maeV float64
		total := 0
		for c := range p.Corruptions {
			for s := range p.Severities {
				total += cc.n[c][s]
			}
		}
		out.FollowUps += float64(total) / float64(len(runs))
		out.Unseen += float64(unseen) / float64(len(runs))
		for c := range p.Corruptions {
			ae := math.Abs(errs[c] - p.CorruptionError(c))
			av := math.Abs(viol[c] - p.CorruptionViolation(c))
			out.AbsErr[c] += ae / float64(len(runs))
			out.AbsErrViolation[c] += av / float64(len(runs))
			mae += ae / float64(nc)
			maeV += av / float64(nc)
			tried := 0
			for s := range p.Severities {
				tried += cc.n[c][s]
			}
			out.Tried[c] += ratio(tried, total) / float64(len(runs))
		}
		out.RunMAE = append(out.RunMAE, mae)
		out.RunMAEViolation = append(out.RunMAEViolation, maeV)
	}
	return out
}

// AgentProfileEstimate sets the profile an agent's runs estimate from
// all the follow-ups they chose (record.Run.Params for the follow-ups and
// violations, record.Run.ParamErrors for the errors, which only a
// corruption report's runs count) against the exhaustive profile p. It
// fails when a run has no ParamErrors or names a follow-up p lacks.
func (p CorruptionProfile) AgentProfileEstimate(name string, runs []record.Run) (ProfileEstimate, error) {
	return p.runsEstimate(name, runs, "param_errors; run it with a corruption section", func(r record.Run) (map[string]record.Counts, map[string]int) {
		return r.Params, r.ParamErrors
	})
}

// AuditProfileEstimate sets the profile estimated from the runs' audit
// samples alone (record.Run.Audit and AuditErrors: a corruption report
// with corruption.audit > 0) against p. An audit sample is drawn
// uniformly whatever the agent seeks, so its estimate is unbiased, where
// the agent's own follow-ups favour what it found violating. It fails when
// a run has no audit sample.
func (p CorruptionProfile) AuditProfileEstimate(name string, runs []record.Run) (ProfileEstimate, error) {
	return p.runsEstimate(name, runs, "audit_errors; run it with corruption.audit > 0", func(r record.Run) (map[string]record.Counts, map[string]int) {
		return r.Audit, r.AuditErrors
	})
}

// runsEstimate is AgentProfileEstimate and AuditProfileEstimate: counts
// returns a run's follow-ups (with their violations) and errors per
// variant key, nil errors meaning the run did not count them (missing
// says what to do about that).
func (p CorruptionProfile) runsEstimate(name string, runs []record.Run, missing string, counts func(record.Run) (map[string]record.Counts, map[string]int)) (ProfileEstimate, error) {
	if len(runs) == 0 {
		return ProfileEstimate{}, fmt.Errorf("analysis: agent %s: no runs", name)
	}
	idx := map[string][2]int{}
	for c, mr := range p.Corruptions {
		for s, sev := range p.Severities {
			idx[record.Verdict{MR: mr, Param: sev}.ParamKey()] = [2]int{c, s}
		}
	}
	var all []cellCounts
	for _, r := range runs {
		follow, errs := counts(r)
		if errs == nil {
			return ProfileEstimate{}, fmt.Errorf("analysis: agent %s, seed %d: the run counted no errors per follow-up (%s)", name, r.Seed, missing)
		}
		cc := cellCounts{grid(len(p.Corruptions), len(p.Severities)), grid(len(p.Corruptions), len(p.Severities)), grid(len(p.Corruptions), len(p.Severities))}
		for k, n := range follow {
			at, ok := idx[k]
			if !ok {
				if n.Count > 0 {
					return ProfileEstimate{}, fmt.Errorf("analysis: agent %s, seed %d: follow-up %s is not in the verdict table", name, r.Seed, k)
				}
				continue
			}
			cc.n[at[0]][at[1]] = n.Count
			cc.viol[at[0]][at[1]] = n.Violations
			cc.errs[at[0]][at[1]] = errs[k]
		}
		all = append(all, cc)
	}
	return p.summarise(name, all), nil
}

// StratifiedEstimate simulates the allocation of a budget of follow-ups
// evenly over the profile's cells (corruption × severity, the remainder
// to the first cells), each cell's share drawn without replacement from
// its exhaustive rows, once per seed (PCG seeded with seed and stream
// 0x5752), and sets the resulting estimates against p: the design-based
// yardstick for an agent's estimate at the same budget. rows is the
// table p was computed from.
func (p CorruptionProfile) StratifiedEstimate(rows []record.Verdict, budget int, seeds []uint64) (ProfileEstimate, error) {
	nc, ns := len(p.Corruptions), len(p.Severities)
	if budget < 1 || len(seeds) == 0 {
		return ProfileEstimate{}, fmt.Errorf("analysis: stratified estimate: budget %d, %d seeds", budget, len(seeds))
	}
	ci := map[string]int{}
	for c, mr := range p.Corruptions {
		ci[mr] = c
	}
	si := map[float64]int{}
	for s, sev := range p.Severities {
		si[sev] = s
	}
	type outcome struct{ err, viol bool }
	cells := make([][][]outcome, nc)
	for c := range cells {
		cells[c] = make([][]outcome, ns)
	}
	for _, v := range rows {
		if !v.HasParam() {
			continue
		}
		c, okc := ci[v.MR]
		s, oks := si[v.Param]
		if !okc || !oks {
			return ProfileEstimate{}, fmt.Errorf("analysis: stratified estimate: row %s of image %d is not in the profile", v.ParamKey(), v.Image)
		}
		cells[c][s] = append(cells[c][s], outcome{v.PredTransformed != v.Label, v.Violation})
	}
	var all []cellCounts
	for _, seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 0x5752))
		cc := cellCounts{grid(nc, ns), grid(nc, ns), grid(nc, ns)}
		for k := 0; k < nc*ns; k++ {
			c, s := k/ns, k%ns
			m := budget / (nc * ns)
			if k < budget%(nc*ns) {
				m++
			}
			pool := cells[c][s]
			m = min(m, len(pool))
			for _, i := range rng.Perm(len(pool))[:m] {
				cc.n[c][s]++
				if pool[i].err {
					cc.errs[c][s]++
				}
				if pool[i].viol {
					cc.viol[c][s]++
				}
			}
		}
		all = append(all, cc)
	}
	return p.summarise("stratified (simulated)", all), nil
}
