package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/amt-dev/amt/bandit"
)

// TestInterruptedRunKeepsStates checks that the states of an interrupted
// run stay as they were (#34, class 7): seed 1 finishes, seed 2 is
// interrupted, and neither state file is written (nor a pending one left),
// so that running the same command again trains each seed once; the run
// that completes then writes both.
func TestInterruptedRunKeepsStates(t *testing.T) {
	sc := mustScenario(t, "hierarchical")
	src := newFakeSource(12)
	tab, err := sweepFake(t, src, sc, t.TempDir(), fakeClassifier{}, context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	env, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		t.Fatal(err)
	}
	spec := AgentSpec{ID: "cover", Name: "cover", Options: map[string]string{"hidden": "2"}}
	state := t.TempDir()
	newAgent := func(seed uint64) (Agent, error) {
		a, _, err := loadOrNewAgent(statePath(state, seed), spec, sc, env.Layout(), seed)
		return a, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	trace := func(seed uint64, s Step) {
		if seed == 2 && s.Iteration == 3 {
			cancel()
		}
	}
	_, err = RunSeeds(ctx, env, sc, newAgent, t.TempDir(), SeedsOptions{Agent: "cover", Seeds: []uint64{1, 2}, StateDir: state, Trace: trace})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: err = %v", err)
	}
	ents, _ := os.ReadDir(state)
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".lock" {
			t.Errorf("the interrupted run left %s in the state folder", e.Name())
		}
	}
	if _, err := RunSeeds(context.Background(), env, sc, newAgent, t.TempDir(), SeedsOptions{Agent: "cover", Seeds: []uint64{1, 2}, StateDir: state}); err != nil {
		t.Fatal(err)
	}
	for _, seed := range []uint64{1, 2} {
		if _, err := os.Stat(statePath(state, seed)); err != nil {
			t.Errorf("after the complete run: %v", err)
		}
		if _, err := os.Stat(statePath(state, seed) + pendingSuffix); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a pending state is left: %v", err)
		}
	}
}
