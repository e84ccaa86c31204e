package experiments

import (
	"context"
	"slices"

	"github.com/amt-dev/amt/experiments/record"
)

// tuneSuite runs every setting of every tune grid on every environment
// with the tuning seeds and chooses, per agent, the setting of the best
// mean normalised score over the environments (the first in grid order on
// a tie).
func tuneSuite(ctx context.Context, cfg *SuiteConfig, envs []*suiteEnv, progress ProgressFunc) ([]record.SuiteTuning, error) {
	var out []record.SuiteTuning
	for _, g := range cfg.Tune.Grid {
		k := slices.IndexFunc(cfg.Agents, func(a AgentSpec) bool { return a.ID == g.Agent })
		base := cfg.Agents[k]
		settings := g.Settings()
		runs := make([][]record.SuiteRuns, len(settings)) // [setting][env]
		var cells []suiteCell
		for i, set := range settings {
			runs[i] = make([]record.SuiteRuns, len(envs))
			spec := AgentSpec{ID: base.ID, Name: base.Name, Options: withOptions(base.Options, set)}
			for e, env := range envs {
				cells = append(cells, suiteCell{env: env, spec: spec, seeds: cfg.Tune.Seeds, runs: &runs[i][e]})
			}
		}
		if err := runSuiteJobs(ctx, cfg, "tuning "+g.Agent, cells, progress); err != nil {
			return nil, err
		}
		tu := record.SuiteTuning{Agent: g.Agent, Seeds: cfg.Tune.Seeds}
		for i, set := range settings {
			st := record.SuiteSetting{Options: withOptions(base.Options, set)}
			n := 0
			for e, env := range envs {
				if norm, ok := env.rec.Oracles.Norm(mean(runs[i][e].Scores)); ok {
					st.MeanNorm += norm
					n++
				}
			}
			st.MeanNorm /= float64(max(n, 1))
			if i == 0 || st.MeanNorm > tu.Settings[tu.Chosen].MeanNorm {
				tu.Chosen = i
			}
			tu.Settings = append(tu.Settings, st)
		}
		out = append(out, tu)
	}
	return out, nil
}
