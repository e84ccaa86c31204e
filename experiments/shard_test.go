package experiments

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{" 2 / 5 ", Shard{2, 5}, ""},
		{"4/4", Shard{}, "the index 4 is not in [0, 3]"},
		{"-1/4", Shard{}, "the index -1"},
		{"0/0", Shard{}, "the count 0 is not in [1, 100000]"},
		{"0/100001", Shard{}, "the count 100001"},
		{"1", Shard{}, "want K/N"},
		{"a/b", Shard{}, "want K/N"},
		{"", Shard{}, "want K/N"},
	} {
		got, err := ParseShard(tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ParseShard(%q): err %v, want %q", tc.in, err, tc.err)
		}
	}
	// The shards of a split own every item exactly once.
	for _, n := range []int{1, 2, 3, 7} {
		for items := 0; items < 20; items++ {
			owners, count := make([]int, items), 0
			for k := 0; k < n; k++ {
				sh := Shard{k, n}
				count += sh.items(items)
				for i := range owners {
					if sh.owns(i) {
						owners[i]++
					}
				}
			}
			for i, o := range owners {
				if o != 1 {
					t.Fatalf("%d shards, %d items: item %d owned %d times", n, items, i, o)
				}
			}
			if count != items {
				t.Fatalf("%d shards, %d items: items() adds up to %d", n, items, count)
			}
		}
	}
}

// shardFixture is a fake sweep of n images into a cache, counting the
// classifier's calls.
type shardFixture struct {
	t     *testing.T
	src   *fakeSource
	cache string
	calls atomic.Int64
	limit int
}

func (f *shardFixture) config(stop func(), after int64) sweepConfig {
	sc := mustScenario(f.t, "basic")
	return sweepConfig{
		study: fakeStudy(f.src, func() (classifier, error) {
			return fakeClassifier{calls: &f.calls, after: after, stop: stop}, nil
		}),
		source: f.src, limit: f.limit, variants: sc.Variants(), relations: fakeRelations(sc),
		newExtractor: func() (extractor, error) { return fakeExtractor{}, nil },
		cacheDir:     f.cache, verdictKey: "v", featureKey: "f", workers: 2,
	}
}

func (f *shardFixture) shard(sh Shard) ShardStats {
	f.t.Helper()
	st, err := sweepShard(context.Background(), f.config(nil, 0), sh)
	if err != nil {
		f.t.Fatalf("shard %s: %v", sh, err)
	}
	return st
}

func (f *shardFixture) merge() (*Table, error) {
	cfg := f.config(nil, 0)
	cfg.mergeOnly = true
	return sweep(context.Background(), cfg)
}

// cacheFile reads a table's file.
func cacheFile(t *testing.T, cache, ns, key, name string) []byte {
	t.Helper()
	dir, _ := cacheDir(cache, ns, key)
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Shards of any split, run in any order (one after the other or at the
// same time), merge into the table of a single-process sweep, byte for
// byte, and leave no shard or checkpoint file behind.
func TestSweepShardsMerge(t *testing.T) {
	src := newFakeSource(37)
	ref := &shardFixture{t: t, src: src, cache: t.TempDir()}
	want, err := sweep(context.Background(), ref.config(nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	wantV := cacheFile(t, ref.cache, "verdicts", "v", "table.jsonl")
	wantF := cacheFile(t, ref.cache, "features", "f", "table.jsonl")
	for _, n := range []int{1, 2, 3, 5, 37, 40} {
		for _, parallel := range []bool{false, true} {
			f := &shardFixture{t: t, src: src, cache: t.TempDir()}
			order := make([]int, n)
			for k := range order {
				order[k] = (k*7 + 3) % n // a permutation for these n
				if n%7 == 0 {
					order[k] = n - 1 - k
				}
			}
			if parallel {
				var wg sync.WaitGroup
				errs := make([]error, n)
				for _, k := range order {
					wg.Add(1)
					go func(k int) {
						defer wg.Done()
						_, errs[k] = sweepShard(context.Background(), f.config(nil, 0), Shard{k, n})
					}(k)
				}
				wg.Wait()
				if err := errors.Join(errs...); err != nil {
					t.Fatal(err)
				}
			} else {
				for _, k := range order {
					if st := f.shard(Shard{k, n}); st.Items != (Shard{k, n}).items(37) || st.Computed != st.Items || st.Cached != 0 {
						t.Fatalf("%d shards: shard %d: %+v", n, k, st)
					}
				}
			}
			if c := f.calls.Load(); c != 37 {
				t.Fatalf("%d shards: %d classifier calls for 37 images", n, c)
			}
			got, err := f.merge()
			if err != nil {
				t.Fatalf("%d shards: merge: %v", n, err)
			}
			if !tablesEqual(t, got, want) {
				t.Fatalf("%d shards: the merged table differs from a single-process sweep's", n)
			}
			if v, fe := cacheFile(t, f.cache, "verdicts", "v", "table.jsonl"), cacheFile(t, f.cache, "features", "f", "table.jsonl"); string(v) != string(wantV) || string(fe) != string(wantF) {
				t.Fatalf("%d shards: the consolidated table.jsonl differs from a single-process sweep's", n)
			}
			for _, ns := range []string{"verdicts", "features"} {
				dir, _ := cacheDir(f.cache, ns, ns[:1])
				if left, _ := filepath.Glob(filepath.Join(dir, "*-*.jsonl")); len(left) != 0 {
					t.Fatalf("%d shards: files left after the merge: %v", n, left)
				}
			}
			// A shard run after the merge computes nothing, and the merge
			// can be repeated.
			if st := f.shard(Shard{0, n}); st.Computed != 0 || f.calls.Load() != 37 {
				t.Fatalf("%d shards: shard 0 after the merge: %+v, %d calls", n, st, f.calls.Load())
			}
			if again, err := f.merge(); err != nil || !tablesEqual(t, again, want) {
				t.Fatalf("%d shards: second merge: %v", n, err)
			}
		}
	}
}

// A merge names the missing shards and computes nothing; a finished shard
// is never recomputed; a rerun of an interrupted shard computes only its
// missing images.
func TestSweepShardsMissingAndResume(t *testing.T) {
	src := newFakeSource(30)
	f := &shardFixture{t: t, src: src, cache: t.TempDir()}
	f.shard(Shard{0, 4})
	f.shard(Shard{2, 4})
	_, err := f.merge()
	var me *MissingShardsError
	if !errors.As(err, &me) || !reflect.DeepEqual(me.Missing, []int{1, 3}) || me.Count != 4 || me.Lacking != 15 || me.Total != 30 {
		t.Fatalf("merge with shards 1 and 3 missing: %v (%+v)", err, me)
	}
	if !strings.Contains(err.Error(), "shards 1/4 and 3/4 are missing") || !strings.Contains(err.Error(), "15 of 30 images") {
		t.Errorf("message: %v", err)
	}
	if f.calls.Load() != 15 {
		t.Fatalf("the merge computed: %d calls", f.calls.Load())
	}
	// A finished shard again: nothing computed, its file untouched.
	dir, _ := cacheDir(f.cache, "verdicts", "v")
	before, _ := os.Stat(filepath.Join(dir, "shard-0of4.jsonl"))
	if st := f.shard(Shard{0, 4}); st.Computed != 0 || st.Cached != 8 || f.calls.Load() != 15 {
		t.Fatalf("rerun of a finished shard: %+v, %d calls", st, f.calls.Load())
	}
	if after, _ := os.Stat(filepath.Join(dir, "shard-0of4.jsonl")); !after.ModTime().Equal(before.ModTime()) {
		t.Error("rerunning a finished shard rewrote its file")
	}
	// Shard 1 interrupted after 3 images.
	ctx, cancel := context.WithCancel(context.Background())
	f.calls.Store(0)
	_, err = sweepShard(ctx, f.config(cancel, 3), Shard{1, 4})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted shard: %v", err)
	}
	first := f.calls.Load()
	if _, err := os.Stat(filepath.Join(dir, "shard-1of4.jsonl")); err == nil {
		t.Fatal("an interrupted shard wrote its shard file")
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "part-1of4-*.jsonl")); len(parts) == 0 {
		t.Fatal("an interrupted shard left no checkpoint")
	}
	f.calls.Store(0)
	st := f.shard(Shard{1, 4})
	if st.Items != 8 || st.Cached+st.Computed != 8 || st.Cached < 2 || first+f.calls.Load() > 8+2 {
		t.Fatalf("resumed shard: %+v after %d + %d calls", st, first, f.calls.Load())
	}
	if parts, _ := filepath.Glob(filepath.Join(dir, "part-*.jsonl")); len(parts) != 0 {
		t.Fatalf("checkpoints left after the shard finished: %v", parts)
	}
	_, err = f.merge()
	if !errors.As(err, &me) || !reflect.DeepEqual(me.Missing, []int{3}) || !strings.Contains(err.Error(), "shard 3/4 is missing") {
		t.Fatalf("merge with shard 3 missing: %v", err)
	}
	f.shard(Shard{3, 4})
	got, err := f.merge()
	if err != nil {
		t.Fatal(err)
	}
	ref := &shardFixture{t: t, src: src, cache: t.TempDir()}
	want, _ := sweep(context.Background(), ref.config(nil, 0))
	if !tablesEqual(t, got, want) {
		t.Fatal("the merged table differs from a single-process sweep's")
	}
	// Nothing to merge at all.
	empty := &shardFixture{t: t, src: src, cache: t.TempDir()}
	if _, err := empty.merge(); !errors.As(err, &me) || me.Count != 0 || !strings.Contains(err.Error(), "nothing to merge") {
		t.Fatalf("merge of an empty cache: %v", err)
	}
}

// Shard files of two splits are not merged: a shard of another split and
// a merge refuse them; a single-process sweep uses them all.
func TestSweepShardsMixedSplits(t *testing.T) {
	src := newFakeSource(12)
	f := &shardFixture{t: t, src: src, cache: t.TempDir()}
	f.shard(Shard{0, 3})
	f.shard(Shard{1, 3})
	if _, err := sweepShard(context.Background(), f.config(nil, 0), Shard{1, 4}); err == nil || !strings.Contains(err.Error(), "holds shard files of a 3-way split (shard-0of3.jsonl, shard-1of3.jsonl), but this is shard 1/4") {
		t.Fatalf("shard of another split: %v", err)
	}
	// Made anyway (the files of another split appear later).
	dir, _ := cacheDir(f.cache, "verdicts", "v")
	g := &shardFixture{t: t, src: src, cache: t.TempDir()}
	g.shard(Shard{3, 4})
	gdir, _ := cacheDir(g.cache, "verdicts", "v")
	b, _ := os.ReadFile(filepath.Join(gdir, "shard-3of4.jsonl"))
	os.WriteFile(filepath.Join(dir, "shard-3of4.jsonl"), b, 0o644)
	if _, err := f.merge(); err == nil || !strings.Contains(err.Error(), "shard files of a 3-way split (shard-0of3.jsonl, shard-1of3.jsonl) and a 4-way split (shard-3of4.jsonl)") {
		t.Fatalf("merge of two splits: %v", err)
	}
	f.calls.Store(0)
	got, err := sweep(context.Background(), f.config(nil, 0))
	if err != nil {
		t.Fatal(err)
	}
	// Shards 0/3 and 1/3 hold images 0, 1, 3, 4, 6, 7, 9, 10; shard 3/4
	// holds 3, 7, 11: images 2, 5 and 8 are left.
	if c := f.calls.Load(); c != 3 {
		t.Fatalf("single-process sweep over mixed shard files: %d calls, want 3", c)
	}
	ref := &shardFixture{t: t, src: src, cache: t.TempDir()}
	want, _ := sweep(context.Background(), ref.config(nil, 0))
	if !tablesEqual(t, got, want) {
		t.Fatal("table differs")
	}
}

// A shard file of other settings, or damaged, is refused with what differs.
func TestSweepShardFileChecks(t *testing.T) {
	src := newFakeSource(8)
	f := &shardFixture{t: t, src: src, cache: t.TempDir()}
	f.shard(Shard{0, 2})
	dir, _ := cacheDir(f.cache, "verdicts", "v")
	p := filepath.Join(dir, "shard-0of2.jsonl")
	good, _ := os.ReadFile(p)
	// The same shard of a sweep with another key (another model).
	other := &shardFixture{t: t, src: src, cache: t.TempDir()}
	ocfg := other.config(nil, 0)
	ocfg.verdictKey = map[string]any{"Model": "abc", "Data": "d"}
	if _, err := sweepShard(context.Background(), ocfg, Shard{1, 2}); err != nil {
		t.Fatal(err)
	}
	odir, _ := cacheDir(other.cache, "verdicts", ocfg.verdictKey)
	foreign, _ := os.ReadFile(filepath.Join(odir, "shard-1of2.jsonl"))
	cases := []struct {
		name, file string
		data       []byte
		want       string
	}{
		{"other key", "shard-1of2.jsonl", foreign, `was made for other settings (its key is {"Data":"d","Model":"abc"} where this table's is "v")`},
		{"renamed", "shard-1of2.jsonl", good, "says it is shard 0/2"},
		{"foreign row", "shard-0of2.jsonl", []byte(strings.Replace(string(good), `{"image":2,`, `{"image":3,`, 1)), "row 3 is not one of shard 0/2's rows below 8"},
		{"no header", "shard-0of2.jsonl", []byte("{}"), "has no header line"},
		{"bad header", "shard-0of2.jsonl", []byte(`{"shard":0,"of":2,"upto":8,"meta":{},"x":1}` + "\n"), `unknown field "x"`},
		{"upto", "shard-0of2.jsonl", []byte(strings.Replace(string(good), `"upto":8`, `"upto":9`, 1)), "holds rows below 9, but the table has 8"},
	}
	for _, tc := range cases {
		os.Remove(filepath.Join(dir, "shard-1of2.jsonl"))
		os.WriteFile(p, good, 0o644)
		os.WriteFile(filepath.Join(dir, tc.file), tc.data, 0o644)
		if _, err := f.merge(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: merge: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A missing shard that exists for other settings beside the cache
	// folder is named.
	os.Remove(filepath.Join(dir, "shard-1of2.jsonl"))
	os.WriteFile(p, good, 0o644)
	ocfg.cacheDir = f.cache
	if _, err := sweepShard(context.Background(), ocfg, Shard{1, 2}); err != nil {
		t.Fatal(err)
	}
	_, err := f.merge()
	if err == nil || !strings.Contains(err.Error(), "shard 1/2 is missing") || !strings.Contains(err.Error(), "is a shard 1/2 of other settings, not used (its key is") {
		t.Fatalf("merge beside another sweep's shard: %v", err)
	}
}

// A limited sweep's shard holds a prefix of the shard; a later unlimited
// shard extends its file, and a limited merge uses the longer file.
func TestSweepShardsLimit(t *testing.T) {
	src := newFakeSource(20)
	f := &shardFixture{t: t, src: src, cache: t.TempDir(), limit: 9}
	for k := 0; k < 2; k++ {
		f.shard(Shard{k, 2})
	}
	small, err := f.merge()
	if err != nil || small.Images != 9 || f.calls.Load() != 9 {
		t.Fatalf("limited merge: %v, %d calls", err, f.calls.Load())
	}
	dir, _ := cacheDir(f.cache, "verdicts", "v")
	if _, err := os.Stat(filepath.Join(dir, "table.jsonl")); err == nil {
		t.Fatal("a limited merge consolidated the table")
	}
	f.limit = 0
	if st := f.shard(Shard{1, 2}); st.Items != 10 || st.Cached != 4 || st.Computed != 6 {
		t.Fatalf("unlimited shard after a limited one: %+v", st)
	}
	f.limit = 9
	if _, err := f.merge(); err != nil {
		t.Fatalf("limited merge after a longer shard file: %v", err)
	}
	f.limit = 0
	_, err = f.merge()
	var me *MissingShardsError
	if !errors.As(err, &me) || !reflect.DeepEqual(me.Missing, []int{0}) || me.Lacking != 5 {
		t.Fatalf("unlimited merge with shard 0 short: %v", err)
	}
	f.shard(Shard{0, 2})
	got, err := f.merge()
	if err != nil || f.calls.Load() != 20 {
		t.Fatalf("merge: %v, %d calls", err, f.calls.Load())
	}
	ref := &shardFixture{t: t, src: src, cache: t.TempDir()}
	want, _ := sweep(context.Background(), ref.config(nil, 0))
	if !tablesEqual(t, got, want) {
		t.Fatal("table differs")
	}
}

// The agents' shards read a sweep made of shard files at the same time:
// that read assembles the whole table but leaves the cache as it is (a
// consolidation would remove the shard files another reader is listing).
func TestSweepShardsReadOnly(t *testing.T) {
	src := newFakeSource(10)
	f := &shardFixture{t: t, src: src, cache: t.TempDir()}
	f.shard(Shard{0, 2})
	f.shard(Shard{1, 2})
	cfg := f.config(nil, 0)
	cfg.mergeOnly, cfg.readOnly = true, true
	got, err := sweep(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ref := &shardFixture{t: t, src: src, cache: t.TempDir()}
	want, _ := sweep(context.Background(), ref.config(nil, 0))
	if !tablesEqual(t, got, want) {
		t.Fatal("the table read differs from a single-process sweep's")
	}
	for _, ns := range []string{"verdicts", "features"} {
		dir, _ := cacheDir(f.cache, ns, ns[:1])
		if _, err := os.Stat(filepath.Join(dir, "table.jsonl")); err == nil {
			t.Errorf("%s: a read-only read consolidated the table", ns)
		}
		if shards, _ := filepath.Glob(filepath.Join(dir, "shard-*of2.jsonl")); len(shards) != 2 {
			t.Errorf("%s: shard files after a read-only read: %v", ns, shards)
		}
	}
	if f.calls.Load() != 10 {
		t.Errorf("%d classifier calls for 10 images", f.calls.Load())
	}
}
