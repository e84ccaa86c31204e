package plots

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// synthVariants returns the hierarchical action set's 59 variants.
func synthVariants() []record.Verdict {
	var out []record.Verdict
	for _, m := range paperMRs()[:5] {
		out = append(out, record.Verdict{MR: m, Param: math.NaN()})
	}
	for d := -90; d <= 90; d += 5 {
		if d != 0 {
			out = append(out, record.Verdict{MR: "rotation", Param: float64(d)})
		}
	}
	for d := -45; d <= 45; d += 5 {
		if d != 0 {
			out = append(out, record.Verdict{MR: "shear", Param: float64(d)})
		}
	}
	return out
}

// synthProb is a violation probability shaped like the paper's baseline:
// per-MR rates near Table 1's, rising with the angle.
func synthProb(v record.Verdict, label int) float64 {
	classBias := 0.6 + 0.08*float64(label%6)
	switch v.MR {
	case "blur":
		return 0.10 * classBias
	case "fliplr":
		return 0.03 * classBias
	case "flipud":
		return 0.5 * classBias
	case "grayscale":
		return 0.12 * classBias
	case "invert":
		return 0.36 * classBias
	case "rotation":
		return math.Min(0.85, 0.03+math.Abs(v.Param)/115) * classBias
	case "shear":
		return math.Min(0.8, 0.01+math.Pow(math.Abs(v.Param)/55, 1.5)) * classBias
	}
	return 0
}

// synthID is the run identity of synthExperiment's agents.
var synthID = record.Identity{ConfigSHA256: record.SHA256([]byte("synthetic")), SweepKey: "synthetic"}

// synthExperiment writes a synthetic hierarchical experiment to dir: an
// exhaustive table over images, and agents "cover" (a non-contextual
// epsilon-greedy stand-in that learns which variants fail) and "random",
// each run for the given seeds over one pass, logging every logEvery
// iterations. It returns nothing but files: the tests read them back.
func synthExperiment(t testing.TB, dir string, images int, seeds []uint64, logEvery int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	vars := synthVariants()
	var rows []record.Verdict
	for i := 0; i < images; i++ {
		label := i % 10
		po := label
		if rng.Float64() < 0.1 {
			po = (label + 1) % 10
		}
		for _, v := range vars {
			v.Image, v.Label, v.PredOriginal, v.PredTransformed = i, label, po, po
			v.MapOriginal, v.MapTransformed = math.NaN(), math.NaN()
			if rng.Float64() < synthProb(v, label) {
				v.Violation = true
				v.PredTransformed = (po + 1 + rng.IntN(9)) % 10
			}
			rows = append(rows, v)
		}
	}
	if err := record.WriteVerdictsCSV(filepath.Join(dir, record.VerdictsFile), rows, false); err != nil {
		t.Fatal(err)
	}
	for _, agent := range []string{"cover", "random"} {
		folder, err := record.CreateAgentFolder(filepath.Join(dir, agent), synthID)
		if err != nil {
			t.Fatal(err)
		}
		sum := record.Summary{Agent: agent, Scenario: "hierarchical", Mode: "online", MeanDecisionUS: 900}
		if agent == "random" {
			sum.MeanDecisionUS = 3
		}
		for _, seed := range seeds {
			r := rand.New(rand.NewPCG(seed, 7))
			run := record.Run{Seed: seed, Arms: map[string]record.Counts{}, Params: map[string]record.Counts{}, MeanIterationMS: 40}
			if agent == "cover" {
				run.MeanIterationMS = 42
			}
			var lines []record.LogLine
			stats := make([]record.Counts, len(vars))
			order := r.Perm(images)
			for it, img := range order {
				k := r.IntN(len(vars))
				if agent == "cover" && it > 50 && r.Float64() > 0.3 {
					best, bestRate := 0, -1.0
					for j, c := range stats {
						if p := (float64(c.Violations) + 1) / (float64(c.Count) + 2); p > bestRate {
							best, bestRate = j, p
						}
					}
					k = best
				} else if agent == "random" {
					// Uniform main arm, then uniform parameter, as the original.
					main := paperMRs()[r.IntN(7)]
					var cand []int
					for j, v := range vars {
						if v.MR == main {
							cand = append(cand, j)
						}
					}
					k = cand[r.IntN(len(cand))]
				}
				row := rows[img*len(vars)+k]
				c := record.Counts{Count: 1}
				if row.Violation {
					c.Violations = 1
				}
				stats[k] = stats[k].Add(c)
				run.Iterations++
				run.Violations += c.Violations
				run.Arms[row.MR] = run.Arms[row.MR].Add(c)
				if row.HasParam() {
					run.Params[row.ParamKey()] = run.Params[row.ParamKey()].Add(c)
				}
				if row.PredOriginal == row.Label {
					run.OriginalScore++
				}
				if row.PredTransformed == row.Label {
					run.ModifiedScore++
				}
				if (it+1)%logEvery == 0 || it+1 == images {
					lines = append(lines, record.LogLine{Agent: agent, Scenario: "hierarchical", Seed: seed, Iteration: it + 1,
						Violations: run.Violations, Reward: float64(run.Violations), Arms: cloneCounts(run.Arms),
						OriginalAccuracy: run.OriginalScore / float64(it+1), ModifiedAccuracy: run.ModifiedScore / float64(it+1)})
				}
			}
			sum.Runs = append(sum.Runs, run)
			if err := folder.WriteLog(seed, lines); err != nil {
				t.Fatal(err)
			}
		}
		if err := folder.Stage(sum, record.Timing{Agent: agent}); err != nil {
			t.Fatal(err)
		}
		if err := folder.Commit(); err != nil {
			t.Fatal(err)
		}
	}
}

func cloneCounts(m map[string]record.Counts) map[string]record.Counts {
	out := make(map[string]record.Counts, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
