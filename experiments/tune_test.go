package experiments

import (
	"context"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/amt-dev/amt/bandit"
)

const tuneDoc = `tune:
  seeds: 101-104
  grid:
    - agent: cover-linear
      options:
        lr: [0.1, 0.5]
        psi: 0.5
`

func TestTuneConfig(t *testing.T) {
	assets := fakeAssets(t)
	c, err := parseConfig([]byte(baseConfig+tuneDoc), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Tuning() || !slices.Equal(c.Tune.Seeds, []uint64{101, 102, 103, 104}) || len(c.Tune.Grid) != 1 ||
		c.Tune.Grid[0].Agent != "cover-linear" || !reflect.DeepEqual(c.Tune.Grid[0].Options, map[string][]string{"lr": {"0.1", "0.5"}, "psi": {"0.5"}}) {
		t.Fatalf("tune %+v", c.Tune)
	}
	if c2, _ := parseConfig([]byte(baseConfig), "exp/test.yaml", assets); c2.Tuning() {
		t.Error("no tune section, but Tuning()")
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"overlap", "seeds: 101-104", "seeds: 2-5", `exp/test.yaml:23:10: tune.seeds: seeds 2, 3 are also in seeds, the evaluation seeds; tuning and evaluation seeds must be disjoint`},
		{"online", "mode: replay", "mode: online", `exp/test.yaml:23:3: tune: tuning runs every setting on every tuning seed: it needs mode replay`},
		{"unknown agent", "agent: cover-linear", "agent: cover-linea", `exp/test.yaml:25:14: tune.grid[0].agent: "cover-linea" is not the id of an agent of agents (cover, cover-linear); did you mean "cover-linear"?`},
		{"option of another agent", "lr: [0.1, 0.5]", "alpha: [0.1, 0.5]", `exp/test.yaml:27:9: tune.grid[0].options.alpha: agent cover has no option "alpha"`},
		{"fixed option", "lr: [0.1, 0.5]", "hidden: [0, 16]", `tune.grid[0].options.hidden: agent cover-linear sets hidden in agents; tune it here or fix it there, not both`},
		{"bad value", "lr: [0.1, 0.5]", "lr: [0.1, fast]", `exp/test.yaml:27:19: tune.grid[0].options.lr: agent cover: option lr="fast"`},
		{"repeated value", "lr: [0.1, 0.5]", "lr: [0.1, 0.1]", `tune.grid[0].options.lr: value "0.1" given twice`},
		{"no seeds", "  seeds: 101-104\n", "", `tune.seeds: missing required key`},
		{"empty grid", "  grid:\n    - agent: cover-linear\n      options:\n        lr: [0.1, 0.5]\n        psi: 0.5\n", "  grid: []\n", `tune.grid: want a non-empty list of grids`},
		{"typo", "  grid:", "  grids:", `tune.grids: unknown key; did you mean "grid"?`},
		{"too large", "psi: 0.5", "psi: (501 values)", `more than 1000 settings`},
	} {
		doc := strings.Replace(baseConfig+tuneDoc, tc.old, tc.new, 1)
		if tc.name == "too large" {
			var vals []string
			for i := 0; i < 501; i++ {
				vals = append(vals, fmt.Sprint(0.001*float64(i+1)))
			}
			doc = strings.Replace(baseConfig+tuneDoc, "psi: 0.5", "psi: ["+strings.Join(vals, ", ")+"]", 1)
		}
		if doc == baseConfig+tuneDoc {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestTuneGridSettings(t *testing.T) {
	g := TuneGrid{Options: map[string][]string{"lr": {"0.1", "0.5"}, "epsilon": {"0.2", "0.05", "0"}}}
	var got []string
	for _, s := range g.Settings() {
		got = append(got, canonical(s))
	}
	want := []string{"epsilon=0.2,lr=0.1", "epsilon=0.2,lr=0.5", "epsilon=0.05,lr=0.1", "epsilon=0.05,lr=0.5", "epsilon=0,lr=0.1", "epsilon=0,lr=0.5"}
	if !slices.Equal(got, want) {
		t.Errorf("settings %v; want %v", got, want)
	}
}

// Tuning picks the setting of highest mean rate on the tuning seeds; its
// runs are the runs an experiment with those seeds makes, and the result
// does not depend on the number of workers.
func TestTuneAgents(t *testing.T) {
	sc := mustScenario(t, "basic")
	src := newFakeSource(30)
	tab, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	env, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{Name: "t", Scenario: sc, Passes: 1, Seeds: []uint64{1, 2},
		Agents: []AgentSpec{{ID: "random", Name: "random"}, {ID: "eg", Name: "epsilon-greedy", Options: bandit.Options{"hidden": "0"}}},
		Tune:   TuneConfig{Seeds: []uint64{11, 12, 13}, Grid: []TuneGrid{{Agent: "eg", Options: map[string][]string{"epsilon": {"1", "0.3", "0.05"}, "lr": {"0.1", "1"}}}}}}
	var recs []string
	var chosen []AgentSpec
	for _, workers := range []int{1, 3} {
		cfg.Workers = workers
		rec, agents, err := tuneAgents(context.Background(), env, cfg, io.Discard, nil)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, fmt.Sprintf("%+v", rec))
		chosen = agents
		if workers > 1 {
			continue
		}
		ta := rec.Agents[0]
		if len(ta.Settings) != 6 || ta.ID != "eg" || ta.Fixed["hidden"] != "0" {
			t.Fatalf("record %+v", ta)
		}
		best := -1.0
		for j, s := range ta.Settings {
			if m := mean(s.Rates); m > best {
				best = m
				if ta.Chosen != j && m > mean(ta.Settings[ta.Chosen].Rates) {
					t.Errorf("chose %d (mean %v), but setting %d has mean %v", ta.Chosen, mean(ta.Settings[ta.Chosen].Rates), j, m)
				}
			}
		}
		// Setting 2, seed 12, run as an experiment's agent would be.
		s := ta.Settings[2]
		a, err := NewAgent(AgentSpec{ID: "eg", Name: "epsilon-greedy", Options: withOptions(bandit.Options{"hidden": "0"}, s.Options)}, sc, env.Layout(), 12)
		if err != nil {
			t.Fatal(err)
		}
		res, err := runLoop(context.Background(), env, sc, a, loopOptions{Seed: 12, Passes: 1})
		if err != nil {
			t.Fatal(err)
		}
		if got := float64(res.Run.Violations) / float64(res.Run.Iterations); math.Abs(got-s.Rates[1]) > 0 {
			t.Errorf("setting %v, seed 12: tuning rate %v, the same run alone %v", s.Options, s.Rates[1], got)
		}
	}
	if recs[0] != recs[1] {
		t.Errorf("1 and 3 workers differ:\n%s\n%s", recs[0], recs[1])
	}
	if chosen[0].Options != nil || chosen[1].Options["hidden"] != "0" || chosen[1].Options["epsilon"] == "" || chosen[1].Options["lr"] == "" {
		t.Errorf("chosen agents %+v", chosen)
	}
}

// A cancelled tuning stops with the context's error.
func TestTuneCancel(t *testing.T) {
	sc := mustScenario(t, "basic")
	src := newFakeSource(30)
	tab, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	env, _ := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	cfg := &Config{Name: "t", Scenario: sc, Passes: 1, Seeds: []uint64{1}, Workers: 2,
		Agents: []AgentSpec{{ID: "eg", Name: "epsilon-greedy"}},
		Tune:   TuneConfig{Seeds: []uint64{11, 12, 13}, Grid: []TuneGrid{{Agent: "eg", Options: map[string][]string{"epsilon": {"1", "0.3"}}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := tuneAgents(ctx, env, cfg, io.Discard, nil); err != context.Canceled {
		t.Errorf("err = %v; want context.Canceled", err)
	}
}
