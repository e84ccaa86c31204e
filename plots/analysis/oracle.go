package analysis

import (
	"fmt"
	"slices"

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

// ScenarioRows returns the rows of the table an agent of the named scenario
// can choose from: every row for "hierarchical" (and for scenarios this
// package does not know), only the MR's rows for "rotation" and "shear", and
// the five unparameterised MRs plus rotation ±30° and shear ±20° for
// "basic".
func ScenarioRows(rows []record.Verdict, scenario string) []record.Verdict {
	var keep func(v record.Verdict) bool
	switch scenario {
	case "rotation", "shear":
		keep = func(v record.Verdict) bool { return v.MR == scenario }
	case "basic":
		keep = func(v record.Verdict) bool {
			switch v.MR {
			case "rotation":
				return v.HasParam() && (v.Param == 30 || v.Param == -30)
			case "shear":
				return v.HasParam() && (v.Param == 20 || v.Param == -20)
			}
			return slices.Contains(MainMRs[:5], v.MR)
		}
	default:
		return rows
	}
	var out []record.Verdict
	for _, v := range rows {
		if keep(v) {
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
