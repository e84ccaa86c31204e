package analysis

import (
	"fmt"

	"github.com/amt-dev/amt/experiments/record"
)

// Oracles computed from the exhaustive verdict table. An agent that sees
// each image once can at best reveal a violation on every image that has a
// failing variant (the per-image best arm); a non-contextual policy that
// always plays one variant at best reaches that variant's rate (the best
// single arm). The gap between an agent's violation rate and these oracles
// is what contextual learning could still gain.

// Oracle is one oracle's violation rate.
type Oracle struct {
	Name string
	// Arm is the variant ("rotation:-90", "flipud") the best-single-arm
	// oracle plays; empty for the per-image oracle.
	Arm    string
	Counts record.Counts // Count = images, Violations = revealed violations
}

// Rate returns the oracle's violation rate.
func (o Oracle) Rate() float64 { return o.Counts.Rate() }

// ScenarioRows returns the rows of the table an agent of a scenario can
// choose from: those whose variant key (record.Verdict.ParamKey) is one of
// the scenario's variants (record.ScenarioMeta.Variants); every row when
// variants is nil (a scenario the reader knows nothing of).
func ScenarioRows(rows []record.Verdict, variants []string) []record.Verdict {
	if variants == nil {
		return rows
	}
	keep := make(map[string]bool, len(variants))
	for _, k := range variants {
		keep[k] = true
	}
	var out []record.Verdict
	for _, v := range rows {
		if keep[v.ParamKey()] {
			out = append(out, v)
		}
	}
	return out
}

// BestSingleArm returns the variant (MR and parameter) whose rows fail most
// often, counted over the images it has rows for. Ties go to the smallest
// variant key, so the answer is deterministic.
func BestSingleArm(rows []record.Verdict) (Oracle, error) {
	per := map[string]record.Counts{}
	for _, v := range rows {
		k := v.ParamKey()
		per[k] = per[k].Add(verdictCounts(v))
	}
	if len(per) == 0 {
		return Oracle{}, fmt.Errorf("analysis: best single arm: the verdict table has no rows")
	}
	best := ""
	for _, k := range SortedKeys(per) {
		if best == "" || per[k].Rate() > per[best].Rate() {
			best = k
		}
	}
	return Oracle{Name: "best single arm", Arm: best, Counts: per[best]}, nil
}

// PerImageBest returns the share of images with at least one failing
// variant: the violation rate of an agent that always picks, for each image,
// a variant that fails on it.
func PerImageBest(rows []record.Verdict) (Oracle, error) {
	anyFail := map[int]bool{}
	for _, v := range rows {
		anyFail[v.Image] = anyFail[v.Image] || v.Violation
	}
	if len(anyFail) == 0 {
		return Oracle{}, fmt.Errorf("analysis: per-image best arm: the verdict table has no rows")
	}
	o := Oracle{Name: "per-image best arm", Counts: record.Counts{Count: len(anyFail)}}
	for _, f := range anyFail {
		if f {
			o.Counts.Violations++
		}
	}
	return o, nil
}
