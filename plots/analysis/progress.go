package analysis

import "github.com/amt-dev/amt/experiments/record"

// Progress is an agent's cumulative state averaged over seeds at every
// iteration that all seeds logged (the original's groupby(iteration).mean()).
type Progress struct {
	Seeds      int
	Iterations []int
	// Violations summarises the seeds' cumulative violation counts at each
	// iteration (mean, sd, min, max).
	Violations []Spread
	// FailureRate is mean cumulative violations / iteration: the original's
	// seed-averaged cumulative failure rate.
	FailureRate []float64
	// OriginalAccuracy and ModifiedAccuracy are the seeds' mean cumulative
	// accuracies on source and follow-up inputs.
	OriginalAccuracy, ModifiedAccuracy []float64
}

// ProgressOf aligns the progress logs of several seeds (one slice of lines
// per seed) on the iterations they all logged and averages them. It fails
// when there are no logs, a log is empty or repeats an iteration, or the
// seeds share no logged iteration.
func ProgressOf(logs [][]record.LogLine) (Progress, error) {
	if len(logs) == 0 {
		return Progress{}, errorf("progress: no logs")
	}
	common := map[int]int{} // iteration → number of seeds that logged it
	byIter := make([]map[int]record.LogLine, len(logs))
	for i, lines := range logs {
		if len(lines) == 0 {
			return Progress{}, errorf("progress: log %d is empty", i+1)
		}
		byIter[i] = make(map[int]record.LogLine, len(lines))
		for _, l := range lines {
			if _, dup := byIter[i][l.Iteration]; dup {
				return Progress{}, errorf("progress: seed %d logs iteration %d twice", l.Seed, l.Iteration)
			}
			if l.Iteration <= 0 {
				return Progress{}, errorf("progress: seed %d logs iteration %d, want > 0", l.Seed, l.Iteration)
			}
			byIter[i][l.Iteration] = l
			common[l.Iteration]++
		}
	}
	p := Progress{Seeds: len(logs)}
	for _, it := range SortedKeys(common) {
		if common[it] != len(logs) {
			continue
		}
		p.Iterations = append(p.Iterations, it)
		vs := make([]float64, len(logs))
		var orig, mod float64
		for i := range logs {
			l := byIter[i][it]
			vs[i] = float64(l.Violations)
			orig += l.OriginalAccuracy
			mod += l.ModifiedAccuracy
		}
		s := SpreadOf(vs)
		p.Violations = append(p.Violations, s)
		p.FailureRate = append(p.FailureRate, s.Mean/float64(it))
		p.OriginalAccuracy = append(p.OriginalAccuracy, orig/float64(len(logs)))
		p.ModifiedAccuracy = append(p.ModifiedAccuracy, mod/float64(len(logs)))
	}
	if len(p.Iterations) == 0 {
		return Progress{}, errorf("progress: the %d seeds' logs share no iteration", len(logs))
	}
	return p, nil
}
