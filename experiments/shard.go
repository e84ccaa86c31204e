package experiments

import (
	"fmt"
	"strconv"
	"strings"
)

// Shard is one part of a long job split over Count processes that may run
// on different machines (a Slurm array job, a Kubernetes Indexed Job): a
// sweep splits its images, an experiment's agent runs split its seeds.
// Shard Index of Count owns the items i (image indices, or positions in
// the configuration's seed list) with i mod Count = Index: round robin, so
// that slow and fast items spread evenly and a limited sweep's shard is a
// prefix of the unlimited sweep's. Indices are 0-based, like a Kubernetes
// Indexed Job's JOB_COMPLETION_INDEX and a Slurm --array=0-(N-1).
//
// Every shard writes only its own files (see sweepcache.go), so shards may
// share a cache folder on a network file system; a merge assembles the
// whole table once every shard is present and names the missing ones. The
// zero Shard is "not sharded".
type Shard struct{ Index, Count int }

// maxShards bounds a split (a Kubernetes Indexed Job allows 100,000
// completions; Slurm's default MaxArraySize is 1,001).
const maxShards = 100000

// ParseShard reads a shard as written on the command line, "K/N" (shard K
// of N, 0 ≤ K < N).
func ParseShard(s string) (Shard, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(strings.TrimSpace(ks))
	n, err2 := strconv.Atoi(strings.TrimSpace(ns))
	if !ok || err1 != nil || err2 != nil {
		return Shard{}, fmt.Errorf("shard %q: want K/N, shard K (counted from 0) of N, e.g. 0/4", s)
	}
	if n < 1 || n > maxShards {
		return Shard{}, fmt.Errorf("shard %q: the count %d is not in [1, %d]", s, n, maxShards)
	}
	if k < 0 || k >= n {
		return Shard{}, fmt.Errorf("shard %q: the index %d is not in [0, %d] (indices count from 0, as JOB_COMPLETION_INDEX and --array=0-%d)", s, k, n-1, n-1)
	}
	return Shard{Index: k, Count: n}, nil
}

// String returns the shard as ParseShard reads it.
func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// sharded reports whether s is a shard (not the zero Shard).
func (s Shard) sharded() bool { return s.Count > 0 }

// owns reports whether item i belongs to the shard; every item belongs to
// the zero Shard.
func (s Shard) owns(i int) bool { return s.Count == 0 || i%s.Count == s.Index }

// items returns how many of the items 0..n-1 the shard owns.
func (s Shard) items(n int) int {
	if s.Count == 0 {
		return n
	}
	if n <= s.Index {
		return 0
	}
	return (n-1-s.Index)/s.Count + 1
}

// tag names the shard in file names: "2of4".
func (s Shard) tag() string { return fmt.Sprintf("%dof%d", s.Index, s.Count) }

// ShardStats says what one shard's run did.
type ShardStats struct {
	Shard Shard
	// Items is the number of images (a sweep shard) or seeds (a run shard)
	// the shard owns; Cached of them were done before this run (by an
	// earlier, interrupted run of the same shard, or a finished sweep), and
	// Computed by this one.
	Items, Cached, Computed int
}

// A MissingShardsError is a merge that lacks shards: the shard files of
// the split do not yet cover every image (or seed).
type MissingShardsError struct {
	// What is "sweep" or "run"; Unit "images" or "seeds".
	What, Unit string
	// Dir is the cache folder the shards write into.
	Dir string
	// Count is the split (0: the folder has no shard file at all).
	Count int
	// Missing lists the indices of the shards that are missing or
	// incomplete, sorted.
	Missing []int
	// Lacking of Total items are in no shard file.
	Lacking, Total int
	// Elsewhere describes shard files of the missing shards that were made
	// for other settings (another model, data set or configuration), found
	// in the cache folders beside Dir.
	Elsewhere []string
}

func (e *MissingShardsError) Error() string {
	var b strings.Builder
	if e.Count == 0 {
		fmt.Fprintf(&b, "%s: nothing to merge: %s has no shard files and no complete table (%d of %d %s missing); run the shards first (-shard K/N for K = 0..N-1)",
			e.What, e.Dir, e.Lacking, e.Total, e.Unit)
	} else {
		names := make([]string, len(e.Missing))
		for i, k := range e.Missing {
			names[i] = Shard{k, e.Count}.String()
		}
		noun, run := "shard "+names[0]+" is", "it (-shard "+names[0]+")"
		if len(names) > 1 {
			noun = "shards " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " are"
			run = fmt.Sprintf("them (-shard K/%d)", e.Count)
		}
		fmt.Fprintf(&b, "%s: %s missing from %s (%d of %d %s): run %s, then merge again",
			e.What, noun, e.Dir, e.Lacking, e.Total, e.Unit, run)
	}
	for _, s := range e.Elsewhere {
		b.WriteString("; " + s)
	}
	return b.String()
}
