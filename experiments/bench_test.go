package experiments

import (
	"context"
	"testing"

	"github.com/amt-dev/amt/bandit"
	"github.com/amt-dev/amt/mr"
)

// BenchmarkRunLoopReplay measures the loop's own overhead per iteration
// (context lookup, choice bookkeeping, verdict lookup, counts) with a
// trivial agent on a replayed table; the bandit's decision time comes on
// top (bandit.BenchmarkHierarchicalDecision).
func BenchmarkRunLoopReplay(b *testing.B) {
	sc := mr.Hierarchical()
	src := newFakeSource(200)
	tab, err := sweep(context.Background(), sweepConfig{
		study: fakeStudy(src, func() (classifier, error) { return fakeClassifier{}, nil }), source: src,
		variants: sc.Variants(), relations: fakeRelations(sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     b.TempDir(), verdictKey: "v", featureKey: "f",
	})
	if err != nil {
		b.Fatal(err)
	}
	rows, _ := tab.Verdicts(sc.Variants())
	env, err := NewReplayEnv(rows, tab.Features, bandit.Layout{Dim: tab.Dim}, sc)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := runLoop(context.Background(), env, sc, newFakeAgent(sc), loopOptions{Seed: uint64(i), LogInterval: 100}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*200)/1000, "µs/iter")
}
