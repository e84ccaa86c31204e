// Package plural writes counts with their nouns for amt's messages and
// reports ("1 seed", "3 seeds"), so that no message says "1 violations".
// Every noun amt counts takes a plain "s" in the plural.
package plural

import "strconv"

// Count writes n with noun, in the plural unless n is 1: Count(1,
// "violation") is "1 violation", Count(3, "seed") is "3 seeds".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}
