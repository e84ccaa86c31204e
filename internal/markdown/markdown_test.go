package markdown

import "testing"

func TestCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"a | b", `a \| b`},
		{"<b> or <i>", `\<b\> or \<i\>`},
		{"ε ≥ 0", "ε ≥ 0"},
	} {
		if got := Cell(tc.in); got != tc.want {
			t.Errorf("Cell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
