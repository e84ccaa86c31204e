package analysis

import (
	"math"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// synthSuite returns a suite of three agents on n environments: "good"
// scores 0.6 + small noise, "random" 0.3 + noise (the reference, exactly
// the environments' random oracle on average), "bad" 0.1 + noise; oracles
// random 0.3, best variant 0.5, per image 0.9.
func synthSuite(n int) record.Suite {
	s := record.Suite{Name: "synth", Seeds: []uint64{1, 2, 3, 4, 5, 6}, Reference: "random", Recommended: "good",
		Agents: []record.SuiteAgent{{ID: "random", Name: "random"}, {ID: "good", Name: "hts"}, {ID: "bad", Name: "cover"}}}
	noise := []float64{0.01, -0.02, 0.015, -0.005, 0, 0.01}
	for i := range n {
		e := record.SuiteEnv{Name: "e" + string(rune('a'+i)), Objective: "fault", Oracles: record.SuiteOracles{Random: 0.3, BestVariant: 0.5, PerImage: 0.9}}
		for _, base := range []float64{0.3, 0.6, 0.1} {
			r := record.SuiteRuns{}
			for j := range s.Seeds {
				v := base + noise[(j+i)%len(noise)]*(1+base)
				r.Scores = append(r.Scores, v)
				r.Violations = append(r.Violations, int(math.Round(v*100)))
				r.Iterations = append(r.Iterations, 100)
			}
			e.Runs = append(e.Runs, r)
		}
		for k := range e.Runs {
			e.Runs[k].Agent = s.Agents[k].ID
		}
		s.Envs = append(s.Envs, e)
	}
	return s
}

// TestCompareSuite: on environments where one agent is always clearly
// better, it wins every paired comparison, ranks first, has a normalised
// score of (0.6 − 0.3)/(0.9 − 0.3) = 0.5 on average, is in the top group (16 environments: CD 0.83)
// alone and never loses; the worst agent loses everywhere.
func TestCompareSuite(t *testing.T) {
	s := synthSuite(16)
	c, err := CompareSuite(s)
	if err != nil {
		t.Fatal(err)
	}
	good, bad, rnd := 1, 2, 0
	if w := c.Pairs[good][rnd]; w.Win != 16 || w.Loss != 0 {
		t.Fatalf("good vs random: %+v, want 16 wins", w)
	}
	if w := c.Pairs[bad][rnd]; w.Loss != 16 || c.Pairs[rnd][bad].Win != 16 {
		t.Fatalf("bad vs random: %+v", w)
	}
	if math.Abs(c.MeanNorm[good]-0.5) > 0.02 || math.Abs(c.MeanNorm[rnd]) > 0.02 {
		t.Fatalf("mean normalised scores %v", c.MeanNorm)
	}
	if r := c.Friedman.MeanRanks; r[good] != 1 || r[rnd] != 2 || r[bad] != 3 {
		t.Fatalf("mean ranks %v", r)
	}
	// CD for 3 agents over 16 environments: q = 2.343 (Demšar's Table 5a) · √(3·4/(6·16)).
	if want := 2.343 * math.Sqrt(12.0/96); math.Abs(c.CD-want) > 1e-3 {
		t.Fatalf("CD %v, want %v", c.CD, want)
	}
	if g := c.TopGroup(); len(g) != 1 || g[0] != good {
		t.Fatalf("top group %v, want only good (ranks 1 and 2 differ by 1 > CD %.3f)", g, c.CD)
	}
	if c.LossFree(good) != 1 || c.LossFree(bad) != 0 {
		t.Fatalf("loss-free shares %v, %v", c.LossFree(good), c.LossFree(bad))
	}
	if c.BeatsBestVariant[good] != 16 || c.BeatsBestVariant[rnd] != 0 {
		t.Fatalf("beats the best variant: %v", c.BeatsBestVariant)
	}
	for i := range s.Envs {
		if cell := c.Cells[i][bad]; !(cell.VsReferenceHolm < SuiteAlpha && cell.VsReference.Diff.Mean < 0) {
			t.Fatalf("env %d: bad not significantly worse than random: %+v", i, cell.VsReference)
		}
	}
}

// TestCompareSuiteTies: two agents with identical runs tie everywhere.
func TestCompareSuiteTies(t *testing.T) {
	s := synthSuite(3)
	for i := range s.Envs {
		s.Envs[i].Runs[2].Scores = append([]float64(nil), s.Envs[i].Runs[0].Scores...)
	}
	c, err := CompareSuite(s)
	if err != nil {
		t.Fatal(err)
	}
	if w := c.Pairs[0][2]; w.Tie != 3 || w.Win+w.Loss != 0 {
		t.Fatalf("identical agents: %+v", w)
	}
	if r := c.Friedman.MeanRanks; r[0] != r[2] {
		t.Fatalf("identical agents rank %v and %v", r[0], r[2])
	}
}
