package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"rotation", "rotation", 0},
		{"rotatoin", "rotation", 1}, // a swap of two adjacent letters is one edit
		{"cdua", "cuda", 1},
		{"cdua", "cpu", 2},
		{"ab", "ba", 1},
		{"abc", "ca", 3}, // each substring edited once: not 2
		{"flipup", "flipud", 1},
		{"blurr", "blur", 1},
		{"kitten", "sitting", 3},
		{strings.Repeat("a", 65), "a", 65},
	} {
		if got := distance(c.a, c.b); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := distance(c.b, c.a); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d (symmetric)", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"blur", "fliplr", "flipud", "grayscale", "invert", "rotation", "shear"}
	for _, c := range []struct {
		word, want string
	}{
		{"rotatoin", "rotation"},
		{"flipup", "flipud"},
		{"fliplr", "fliplr"},
		{"inverse", "invert"},
		{"sharpen", ""}, // more than 2 edits from every name
		{"", ""},
		{"flip", "fliplr"}, // 2 edits from both flips: the first of the list
		{"fli", ""},        // 3 edits from both
	} {
		if got := Closest(c.word, known); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.word, got, c.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	if got, want := DidYouMean("shaer", []string{"rotation", "shear"}), `; did you mean "shear"?`; got != want {
		t.Errorf("DidYouMean = %q, want %q", got, want)
	}
	if got := DidYouMean("zoom", []string{"rotation", "shear"}); got != "" {
		t.Errorf("DidYouMean with no close word = %q, want \"\"", got)
	}
}
