// Package suggest finds the known word closest to a misspelt one, for the
// "did you mean" of error messages: a configuration key, a relation, an
// agent, a scenario or any other name chosen from a fixed list.
package suggest

import "fmt"

// maxEdits is the largest edit distance counted as a typo.
const maxEdits = 2

// maxLen is the longest word compared; a longer one is not a typo of a
// name.
const maxLen = 64

// Closest returns the word of known closest to word by edit distance
// (insertions, deletions and substitutions of one byte, and swaps of two
// adjacent bytes) if it is at most 2 edits away, the first such word on a
// tie, or "" if there is none.
func Closest(word string, known []string) string {
	best, bd := "", maxEdits+1
	for _, c := range known {
		if d := distance(word, c); d < bd {
			best, bd = c, d
		}
	}
	return best
}

// DidYouMean returns `; did you mean "X"?` for Closest's word X, or ""
// when there is none: an error message's clause, as in
// `unknown relation "rotatoin"; did you mean "rotation"?`.
func DidYouMean(word string, known []string) string {
	if s := Closest(word, known); s != "" {
		return fmt.Sprintf("; did you mean %q?", s)
	}
	return ""
}

// distance returns the optimal string alignment distance of a and b in
// bytes (Levenshtein's edits plus the swap of two adjacent bytes, each
// substring edited once), or the longer length when either is longer than
// maxLen.
func distance(a, b string) int {
	if len(a) > maxLen || len(b) > maxLen {
		return max(len(a), len(b))
	}
	// d[i][j]: the distance of a[:i] and b[:j]; three rows kept.
	pp := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			c = min(c, prev[j]+1, cur[j-1]+1)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				c = min(c, pp[j-2]+1)
			}
			cur[j] = c
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
