package experiments

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// maxSeeds is the most seeds an experiment or amt replay takes: every seed
// is one run of every agent, so a million seeds is already more work than
// any study needs, and the limit keeps a typo such as 1-10000000000 from
// allocating gigabytes.
const maxSeeds = 1_000_000

// seedRange is the seeds lo..hi, both included.
type seedRange struct{ lo, hi uint64 }

// ParseSeeds parses a seed specification: one seed ("3"), an ascending
// range ("1-10", both ends included) or a comma-separated list of both
// ("1-3,7"). Seeds are unsigned 64-bit integers (the largest,
// 18446744073709551615, included); a seed may be given only once, and a
// specification gives at most 1,000,000 seeds. The work is linear in the
// number of seeds.
func ParseSeeds(s string) ([]uint64, error) {
	var ranges []seedRange
	var total uint64
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
		}
		if err1 != nil || err2 != nil || b < a {
			return nil, fmt.Errorf("seeds %q: %q is not a seed or an ascending range such as 1-10", s, part)
		}
		// b-a+1 seeds; b-a ≥ maxSeeds also catches the overflow of 0-max.
		if b-a >= maxSeeds || total+(b-a+1) > maxSeeds {
			return nil, fmt.Errorf("seeds %q: more than %d seeds (the limit: each seed is one run of every agent)", s, maxSeeds)
		}
		total += b - a + 1
		ranges = append(ranges, seedRange{a, b})
	}
	// Duplicates: sorted by start, the first range that starts at or
	// before the end of the one before it overlaps it, and its start is
	// the smallest seed given twice.
	sorted := slices.Clone(ranges)
	slices.SortFunc(sorted, func(x, y seedRange) int {
		switch {
		case x.lo < y.lo:
			return -1
		case x.lo > y.lo:
			return 1
		}
		return 0
	})
	for i := 1; i < len(sorted); i++ {
		if sorted[i].lo <= sorted[i-1].hi {
			return nil, fmt.Errorf("seeds %q: seed %d given twice", s, sorted[i].lo)
		}
	}
	out := make([]uint64, 0, total)
	for _, r := range ranges {
		// Counting by offset never wraps around, even for a range ending
		// at the largest uint64.
		for k := uint64(0); k <= r.hi-r.lo; k++ {
			out = append(out, r.lo+k)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("no seeds")
	}
	return out, nil
}
