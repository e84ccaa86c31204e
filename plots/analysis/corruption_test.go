package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// corruptionRows builds a classification table of two images, both of
// label 0: clean gives the predictions on the source images and follow
// maps a variant ("a:1") to the predictions on its follow-ups.
func corruptionRows(clean [2]int, follow map[string][2]int) []record.Verdict {
	var rows []record.Verdict
	for _, k := range []string{"a:1", "a:2", "b:1", "b:2"} {
		p, ok := follow[k]
		if !ok {
			continue
		}
		mr, sev := k[:1], float64(k[2]-'0')
		for img := range 2 {
			rows = append(rows, record.Verdict{Image: img, MR: mr, Param: sev, Label: 0,
				PredOriginal: clean[img], PredTransformed: p[img], Violation: p[img] != clean[img],
				MapOriginal: math.NaN(), MapTransformed: math.NaN()})
		}
	}
	return rows
}

func nearNaN(a, b float64) bool { return math.Abs(a-b) < 1e-12 || (math.IsNaN(a) && math.IsNaN(b)) }

// TestCorruptionErrors checks CE, mCE, relative CE and relative mCE on
// hand-made tables, worked out by hand from the formulas of Hendrycks &
// Dietterich (ICLR 2019).
func TestCorruptionErrors(t *testing.T) {
	// f: clean error 1/2; E(a) = 1/2, 1; E(b) = 0, 1/2.
	f := corruptionRows([2]int{0, 1}, map[string][2]int{"a:1": {0, 1}, "a:2": {1, 1}, "b:1": {0, 0}, "b:2": {1, 0}})
	// ref: clean error 0; E(a) = 1/2, 1; E(b) = 1/2, 1.
	ref := corruptionRows([2]int{0, 0}, map[string][2]int{"a:1": {1, 0}, "a:2": {1, 1}, "b:1": {1, 0}, "b:2": {1, 1}})
	// never: the reference never errs on b.
	never := corruptionRows([2]int{0, 0}, map[string][2]int{"a:1": {1, 0}, "a:2": {1, 1}, "b:1": {0, 0}, "b:2": {0, 0}})
	for _, tc := range []struct {
		name        string
		f, ref      []record.Verdict
		ce, rel     []float64
		mCE, relMCE float64
		wantErr     bool
	}{
		{name: "model against reference", f: f, ref: ref,
			// CE_a = 1.5/1.5, CE_b = 0.5/1.5; relCE_a = (0+0.5)/1.5, relCE_b = (−0.5+0)/1.5.
			ce: []float64{1, 1.0 / 3}, rel: []float64{1.0 / 3, -1.0 / 3}, mCE: 2.0 / 3, relMCE: 0},
		{name: "reference against itself", f: ref, ref: ref,
			ce: []float64{1, 1}, rel: []float64{1, 1}, mCE: 1, relMCE: 1},
		{name: "reference never errs on b", f: f, ref: never,
			ce: []float64{1, math.NaN()}, rel: []float64{1.0 / 3, math.NaN()}, mCE: 1, relMCE: 1.0 / 3},
		{name: "different corruptions", f: f, ref: corruptionRows([2]int{0, 0}, map[string][2]int{"a:1": {0, 0}, "a:2": {0, 0}}), wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pf, err := CorruptionProfileOf(tc.f)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := CorruptionProfileOf(tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			ces, mCE, relMCE, err := CorruptionErrors(pf, pr)
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, c := range ces {
				if !nearNaN(c.CE, tc.ce[i]) || !nearNaN(c.RelCE, tc.rel[i]) {
					t.Errorf("%s: CE %v relCE %v, want %v %v", c.Corruption, c.CE, c.RelCE, tc.ce[i], tc.rel[i])
				}
			}
			if !nearNaN(mCE, tc.mCE) || !nearNaN(relMCE, tc.relMCE) {
				t.Errorf("mCE %v relative mCE %v, want %v %v", mCE, relMCE, tc.mCE, tc.relMCE)
			}
		})
	}
}

func TestCorruptionProfile(t *testing.T) {
	f := corruptionRows([2]int{0, 1}, map[string][2]int{"a:1": {0, 1}, "a:2": {1, 1}, "b:1": {0, 0}, "b:2": {1, 0}})
	p, err := CorruptionProfileOf(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want float64
	}{
		{"clean", p.Clean(), 0.5},
		{"E a:1", p.Error(0, 0), 0.5},
		{"E b:2", p.Error(1, 1), 0.5},
		{"V a:1", p.Violation(0, 0), 0},
		{"V b:2", p.Violation(1, 1), 1},
		{"E a", p.CorruptionError(0), 0.75},
		{"V b", p.CorruptionViolation(1), 0.75},
	} {
		if !nearNaN(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	if _, err := CorruptionProfileOf(corruptionRows([2]int{0, 0}, map[string][2]int{"a:1": {0, 0}, "a:2": {0, 0}, "b:1": {0, 0}})); err == nil {
		t.Error("b without severity 2: no error")
	}
	unlabelled := corruptionRows([2]int{0, 0}, map[string][2]int{"a:1": {0, 0}})
	unlabelled[0].Label = -1
	if _, err := CorruptionProfileOf(unlabelled); err == nil {
		t.Error("unlabelled: no error")
	}
}

func TestProfileEstimates(t *testing.T) {
	f := corruptionRows([2]int{0, 1}, map[string][2]int{"a:1": {0, 1}, "a:2": {1, 1}, "b:1": {0, 0}, "b:2": {1, 0}})
	p, err := CorruptionProfileOf(f)
	if err != nil {
		t.Fatal(err)
	}
	// The whole table as the budget: every cell is drawn whole, exact.
	st, err := p.StratifiedEstimate(f, len(f), []uint64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	if e, v := st.MAE(); e.Mean != 0 || v.Mean != 0 || st.FollowUps != 8 || st.Unseen != 0 {
		t.Errorf("stratified over the whole table: MAE %v/%v, %v follow-ups, %v unseen; want 0, 0, 8, 0", e.Mean, v.Mean, st.FollowUps, st.Unseen)
	}
	for _, tc := range []struct {
		name    string
		run     record.Run
		absErr  []float64 // per corruption
		unseen  float64
		wantErr bool
	}{
		// Every severity of a tried: exact (3/4); b never tried: the run's
		// pooled 3/4 against the exhaustive 1/4.
		{name: "b unseen", run: record.Run{Seed: 1,
			Params:      map[string]record.Counts{"a:1": {Count: 2, Violations: 0}, "a:2": {Count: 2, Violations: 1}, "b:1": {}, "b:2": {}},
			ParamErrors: map[string]int{"a:1": 1, "a:2": 2, "b:1": 0, "b:2": 0}},
			absErr: []float64{0, 0.5}, unseen: 1},
		// Only severity 2 of b tried: its pooled rate 1/2 against 1/4.
		{name: "b pooled", run: record.Run{Seed: 1,
			Params:      map[string]record.Counts{"a:1": {Count: 2}, "a:2": {Count: 2}, "b:2": {Count: 2, Violations: 2}},
			ParamErrors: map[string]int{"a:1": 1, "a:2": 2, "b:2": 1}},
			absErr: []float64{0, 0.25}},
		{name: "no errors counted", run: record.Run{Seed: 1, Params: map[string]record.Counts{"a:1": {Count: 1}}}, wantErr: true},
		{name: "unknown follow-up", run: record.Run{Seed: 1, Params: map[string]record.Counts{"c:1": {Count: 1}}, ParamErrors: map[string]int{}}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			est, err := p.AgentProfileEstimate("x", []record.Run{tc.run})
			if tc.wantErr {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for c, want := range tc.absErr {
				if !nearNaN(est.AbsErr[c], want) {
					t.Errorf("%s: |error| %v, want %v", p.Corruptions[c], est.AbsErr[c], want)
				}
			}
			if est.Unseen != tc.unseen {
				t.Errorf("unseen %v, want %v", est.Unseen, tc.unseen)
			}
		})
	}
}

// The audit estimate reads the runs' audit samples alone: here they cover
// every cell and are exact, while all follow-ups never tried b.
func TestAuditProfileEstimate(t *testing.T) {
	f := corruptionRows([2]int{0, 1}, map[string][2]int{"a:1": {0, 1}, "a:2": {1, 1}, "b:1": {0, 0}, "b:2": {1, 0}})
	p, err := CorruptionProfileOf(f)
	if err != nil {
		t.Fatal(err)
	}
	run := record.Run{Seed: 1,
		Params:      map[string]record.Counts{"a:1": {Count: 2}, "a:2": {Count: 2, Violations: 1}, "b:1": {}, "b:2": {}},
		ParamErrors: map[string]int{"a:1": 1, "a:2": 2, "b:1": 0, "b:2": 0},
		Audit:       map[string]record.Counts{"a:1": {Count: 2}, "a:2": {Count: 2}, "b:1": {Count: 2}, "b:2": {Count: 2}},
		AuditErrors: map[string]int{"a:1": 1, "a:2": 2, "b:1": 0, "b:2": 1},
	}
	all, err := p.AgentProfileEstimate("x", []record.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	audit, err := p.AuditProfileEstimate("x: audit sample", []record.Run{run})
	if err != nil {
		t.Fatal(err)
	}
	for c, want := range [][2]float64{{0, 0}, {0.5, 0}} {
		if !nearNaN(all.AbsErr[c], want[0]) || !nearNaN(audit.AbsErr[c], want[1]) {
			t.Errorf("%s: |error| %v (all follow-ups), %v (audit), want %v, %v", p.Corruptions[c], all.AbsErr[c], audit.AbsErr[c], want[0], want[1])
		}
	}
	if audit.FollowUps != 8 || audit.Name != "x: audit sample" {
		t.Errorf("audit estimate %q over %v follow-ups, want 8", audit.Name, audit.FollowUps)
	}
	run.Audit, run.AuditErrors = nil, nil
	if _, err := p.AuditProfileEstimate("x", []record.Run{run}); err == nil || !strings.Contains(err.Error(), "corruption.audit") {
		t.Errorf("a run without an audit sample: %v, want an error naming corruption.audit", err)
	}
}
