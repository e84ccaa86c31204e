package experiments

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/experiments/gate"
	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/internal/suggest"
	"github.com/amt-dev/amt/scenario"
)

// CheckOptions are the settings of a check that are not in the
// configuration's check section.
type CheckOptions struct {
	// Replay answers from the cached exhaustive sweep (computing it if
	// needed) instead of running the system under test: for trying
	// conditions on known tables. A check is online otherwise, whatever
	// the configuration's mode.
	Replay bool
	// Trace, when set, receives every iteration of the session.
	Trace func(Step)
}

// Check runs amt check, the metamorphic test gate for continuous
// integration (the paper's motivation): one adaptive testing session of the
// configured check agent on the system under test, online, with an
// iteration budget and optionally a time budget, continuing the agent from
// its state file when one exists and saving it afterwards (the paper's
// "load existing or initialise new bandit"), then the decision of package
// gate on the configured conditions, comparing with the baseline folder
// when one is given. A share check.audit of the budget (all of it by
// default) is the audit sample (auditAgent: uniform follow-ups the agent
// neither chooses nor learns); the regression conditions compare this
// session's audit sample with the baseline's, the absolute conditions
// count every follow-up. A baseline without an audit sample, or a check
// with check.audit 0 and a baseline, is a *ConfigError.
//
// It writes into Output the usual result files of a run (run.json,
// config.yaml, <agent>/summary.json, seed-<n>.jsonl, timing.json), the
// violations found (<agent>/violations.jsonl), the gallery of the first
// Gallery of each MR (gallery/<agent>/<mr>.png) and, last, the decision
// (check.json); the state file is State/<agent>/seed-<seed>.state, State
// defaulting to Output/state. plots.WriteCheckReports turns the folder into
// summary.md and junit.xml. Problems with the configuration, the budget
// or the baseline are *ConfigError values, reported before the session.
func (e *Experiment) Check(ctx context.Context, log io.Writer, progress ProgressFunc, opt CheckOptions) (record.Check, error) {
	cfg := e.Config
	cc := cfg.Check
	sc := cfg.Scenario
	var res record.Check
	var spec AgentSpec
	var ids []string
	for _, a := range cfg.Agents {
		ids = append(ids, a.ID)
		if a.ID == cc.Agent {
			spec = a
		}
	}
	switch {
	case cfg.Tuning():
		return res, cfg.errAt("tune", "amt check runs its agent as configured: tune it with amt tune, then check with the chosen options")
	case cfg.Regressing():
		return res, cfg.errAt("regression", "amt check tests one SUT: check each model with its own configuration, the earlier one's results as -baseline")
	}
	if spec.ID == "" {
		return res, cfg.errAt("check.agent", "%q is not the id of an agent of agents (%s)%s", cc.Agent, strings.Join(ids, ", "), suggest.DidYouMean(cc.Agent, ids))
	}
	budget := cc.Budget
	if budget == 0 {
		budget = cfg.Iterations
	}
	if budget == 0 {
		budget = cfg.Passes * e.src.Len()
	}
	if most := cfg.Passes * e.src.Len(); budget > most {
		return res, cfg.errAt("check.budget", "%d iterations is more than passes × images = %d × %d", budget, cfg.Passes, e.src.Len())
	}
	conds := cc.Conditions()
	mrs := sc.Actions()
	// Deciding on no counts checks the conditions (relations, limits)
	// before the session rather than after it.
	if _, err := gate.Decide(conds, mrs, record.Counts{}, nil, nil); err != nil {
		return res, cfg.errAt("check.fail_on", "%w", err)
	}
	if !(cc.Audit >= 0 && cc.Audit <= 1) {
		return res, cfg.errAt("check.audit", "%v is not a share in [0, 1]", cc.Audit)
	}
	var base gate.Cells
	if cc.Baseline != "" {
		if int(float64(budget)*cc.Audit) == 0 {
			return res, cfg.errAt("check.audit", "%g of %d iterations leaves no audit sample for the regression test against -baseline %s: raise check.audit (-audit) or the budget", cc.Audit, budget, cc.Baseline)
		}
		var err error
		if base, res.Baseline, err = readBaseline(cc.Baseline, sc); err != nil {
			return res, cfg.errAt("check.baseline", "%w", err)
		}
		res.Baseline.Alpha, res.Baseline.MarginPP = cc.Alpha, cc.Margin
	}

	mode := "online"
	var env Env
	if opt.Replay {
		mode = "replay"
		t, err := e.Sweep(ctx, progress)
		if err != nil {
			return res, err
		}
		if env, err = t.replayEnv(sc, cfg.Features.sut()); err != nil {
			return res, err
		}
	} else {
		var err error
		if env, err = e.onlineEnv(); err != nil {
			return res, err
		}
	}

	stateRoot := cfg.State
	if stateRoot == "" {
		stateRoot = filepath.Join(cfg.Output, "state")
	}
	stateDir := filepath.Join(stateRoot, spec.ID)
	res.State = &record.CheckState{Path: statePath(stateDir, cc.Seed)}

	m := e.meta()
	m.Mode, m.Seeds, m.Iterations = mode, []uint64{cc.Seed}, budget
	m.Agents = []record.AgentMeta{{ID: spec.ID, Name: spec.Name, Options: spec.Options}}
	if err := record.WriteMeta(filepath.Join(cfg.Output, record.MetaFile), m); err != nil {
		return res, err
	}
	if err := record.WriteFileAtomic(filepath.Join(cfg.Output, record.ConfigFile), cfg.doc); err != nil {
		return res, err
	}

	var deadline time.Time
	if cc.Time > 0 {
		deadline = time.Now().Add(cc.Time)
	}
	vlog := &violationLog{sc: sc}
	done, stage := 0, Stage{Name: "check " + cfg.Name + ": agent " + spec.ID + " (" + mode + ")", Unit: "iteration"}
	if progress != nil {
		progress(stage, 0, budget)
	}
	trace := func(seed uint64, s Step) {
		vlog.add(seed, s)
		if opt.Trace != nil {
			opt.Trace(s)
		}
		done++
		if progress != nil {
			progress(stage, done, budget)
		}
	}
	sum, err := RunSeeds(ctx, env, sc, func(seed uint64) (Agent, error) {
		ag, loaded, err := loadOrNewAgent(res.State.Path, spec, sc, env.Layout(), seed)
		res.State.Loaded = loaded
		if err != nil {
			return nil, err
		}
		return withAudit(ag, sc, cc.Audit, seed), nil
	}, filepath.Join(cfg.Output, spec.ID), SeedsOptions{
		Agent: spec.ID, Mode: mode, Seeds: []uint64{cc.Seed}, Passes: cfg.Passes, Iter: budget,
		Interval: cfg.LogInterval, Timing: cfg.Timing, StateDir: stateDir, Trace: trace, Deadline: deadline, Identity: e.id,
	})
	if err != nil {
		return res, err
	}
	if res.State.Loaded {
		fmt.Fprintf(log, "%s: agent %s continued from %s (saved there again)\n", cfg.Name, spec.ID, res.State.Path)
	} else {
		fmt.Fprintf(log, "%s: agent %s started afresh; its state is saved to %s\n", cfg.Name, spec.ID, res.State.Path)
	}
	run := sum.Runs[0]

	if err := e.writeGallery(ctx, spec.ID, vlog.out, fmt.Sprintf("seed %d", cc.Seed)); err != nil {
		return res, err
	}

	// The regression test compares audit samples (see package gate); the
	// absolute conditions and the reports count every follow-up.
	if conds.Regression != nil {
		conds.Regression.Sample = gate.AuditCellsOf(sum.Runs)
		if conds.Regression.Sample == nil {
			conds.Regression.Sample = gate.Cells{}
		}
	}
	for _, c := range run.Audit {
		res.AuditIterations += c.Count
	}
	res.Audit = cc.Audit
	d, err := gate.Decide(conds, mrs, record.Counts{Count: run.Iterations, Violations: run.Violations}, gate.CellsOf(m.Scenario, sum.Runs), base)
	if err != nil {
		return res, cfg.errAt("check", "%w", err)
	}
	res.Verdict, res.Agent, res.Seed = d.Verdict(), spec.ID, cc.Seed
	res.Budget, res.Iterations, res.Violations = budget, run.Iterations, run.Violations
	res.StoppedBy = "budget"
	if run.Iterations < budget {
		res.StoppedBy = "time"
	}
	if cc.Time > 0 {
		res.TimeBudget = cc.Time.String()
	}
	res.Conditions, res.MRs = d.Conditions, d.MRs
	if res.Conditions == nil {
		res.Conditions = []record.Condition{}
	}
	return res, record.WriteCheck(filepath.Join(cfg.Output, record.CheckFile), res)
}

// readBaseline reads a previous run's result folder: its run.json and the
// summaries of its agents, pooled into the cells of the regression tests.
// The baseline must share at least one relation with the scenario.
func readBaseline(dir string, sc scenario.Scenario) (gate.Cells, *record.CheckBaseline, error) {
	m, err := record.ReadMeta(filepath.Join(dir, record.MetaFile))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("baseline %s: no %s: want the results folder of an earlier amt check or amt run", dir, record.MetaFile)
		}
		return nil, nil, fmt.Errorf("baseline: %w", err)
	}
	var runs []record.Run
	for _, a := range m.Agents {
		s, err := record.ReadSummary(filepath.Join(dir, a.ID, record.SummaryFile))
		if err != nil {
			return nil, nil, fmt.Errorf("baseline: %w", err)
		}
		runs = append(runs, s.Runs...)
	}
	if len(runs) == 0 {
		return nil, nil, fmt.Errorf("baseline %s: its %s lists no agents", dir, record.MetaFile)
	}
	// The regression test compares the audit samples of the two checks:
	// the agent's own follow-ups are no sample of one population (it seeks
	// violations where it expects them).
	cells := gate.AuditCellsOf(runs)
	if len(cells) == 0 {
		return nil, nil, fmt.Errorf("baseline %s has no audit sample (its run had check.audit 0, or predates the audit): run a check with check.audit > 0 as the baseline", dir)
	}
	shared := false
	for _, a := range sc.Arms {
		shared = shared || len(cells[a.Action]) > 0
	}
	if !shared {
		return nil, nil, fmt.Errorf("baseline %s (scenario %s) shares no relation with scenario %s", dir, m.Scenario.Name, sc.Name)
	}
	b := &record.CheckBaseline{Dir: dir, Experiment: m.Experiment, SUT: m.SUT, Runs: len(runs)}
	for _, r := range runs {
		b.Iterations += r.Iterations
	}
	return cells, b, nil
}

// violationLog collects the violations of runs from their steps, at most
// perMR of each relation per seed when perMR > 0 (the gallery's cases).
type violationLog struct {
	sc    scenario.Scenario
	perMR int
	seed  *uint64 // only this seed's, when set
	out   []record.Violation
	n     map[string]int
}

func (l *violationLog) add(seed uint64, s Step) {
	if !s.Violated || (l.seed != nil && seed != *l.seed) {
		return
	}
	v, err := l.sc.Variant(s.Choice.Arm, s.Choice.Param)
	if err != nil {
		return // the loop has checked the choice
	}
	if l.perMR > 0 {
		if l.n == nil {
			l.n = map[string]int{}
		}
		if l.n[v.Action] >= l.perMR {
			return
		}
		l.n[v.Action]++
	}
	o := s.Outcome
	l.out = append(l.out, record.Violation{
		Seed: seed, Iteration: s.Iteration, Image: s.Image, ID: int64(s.Image), Variant: v.Key(), MR: v.Action,
		PredOriginal: o.PredOriginal, PredTransformed: o.PredModified, Label: o.Label,
		ScoreOriginal: o.OriginalScore, ScoreTransformed: o.ModifiedScore,
	})
}

// writeGallery writes a check agent's violations (with their image ids)
// to <agent>/violations.jsonl and draws its gallery.
func (e *Experiment) writeGallery(ctx context.Context, agent string, vs []record.Violation, what string) error {
	if err := e.fillIDs(vs); err != nil {
		return err
	}
	if err := record.WriteViolations(filepath.Join(e.Config.Output, agent, record.ViolationsFile), vs); err != nil {
		return err
	}
	return e.drawGallery(ctx, agent, vs, what)
}

// fillIDs sets the data set's image ids of violations (COCO image ids; the
// index otherwise) and, for an image folder, the images' file names, which
// violations.jsonl, summary.md, junit.xml and the gallery then show.
func (e *Experiment) fillIDs(vs []record.Violation) error {
	if f, ok := e.data.(folderLister); ok {
		names := f.Names()
		for i := range vs {
			if vs[i].Image >= 0 && vs[i].Image < len(names) {
				vs[i].Name = names[vs[i].Image]
			}
		}
		return nil
	}
	if e.data == nil || e.Config.Data.Format != "coco" {
		return nil
	}
	ids := map[int]int64{}
	for i := range vs {
		id, ok := ids[vs[i].Image]
		if !ok {
			c, err := e.data.Case(vs[i].Image)
			if err != nil {
				return fmt.Errorf("violations: image %d: %w", vs[i].Image, err)
			}
			id, ids[vs[i].Image] = c.ID, c.ID
		}
		vs[i].ID = id
	}
	return nil
}

// maxLabelsSize caps a sut.labels file.
const maxLabelsSize = 1 << 20

// classNames returns the class names of an experiment: sut.labels, one
// name per line, else the data set's (CIFAR-10's batches.meta.txt, COCO's
// categories in class index order), else nil.
func classNames(cfg *Config, src data.Source) ([]string, error) {
	if cfg.SUT.Labels != "" {
		b, err := limits.ReadFile(cfg.SUT.Labels, maxLabelsSize)
		var tl *limits.TooLargeError
		if err != nil && !errors.As(err, &tl) {
			return nil, cfg.errAt("sut.labels", "%w", err)
		}
		if err != nil {
			return nil, cfg.errAt("sut.labels", "%s: more than %d bytes; want one class name per line", cfg.SUT.Labels, maxLabelsSize)
		}
		var names []string
		for _, l := range strings.Split(strings.TrimRight(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), "\n") {
			names = append(names, strings.TrimSpace(l))
		}
		if len(names) == 0 || (len(names) == 1 && names[0] == "") {
			return nil, cfg.errAt("sut.labels", "%s names no class; want one class name per line", cfg.SUT.Labels)
		}
		return names, nil
	}
	var names []string
	for _, c := range src.Info().Classes {
		for len(names) < c.Index {
			names = append(names, "")
		}
		if c.Index == len(names) {
			names = append(names, c.Name)
		}
	}
	return names, nil
}
