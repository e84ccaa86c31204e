package plots

import (
	"testing"

	"github.com/amt-dev/amt/experiments/record"
)

// TestImageText: a violation on an image folder's image is named by its
// file as well as its index in summary.md and junit.xml (#34, class 8);
// others as before.
func TestImageText(t *testing.T) {
	for _, c := range []struct {
		v    record.Violation
		want string
	}{
		{record.Violation{Image: 3, ID: 3, Name: "cat.png"}, "3 (cat.png)"},
		{record.Violation{Image: 3, ID: 139}, "3 (id 139)"},
		{record.Violation{Image: 3, ID: 3}, "3"},
	} {
		if got := imageText(c.v); got != c.want {
			t.Errorf("imageText(%+v) = %q, want %q", c.v, got, c.want)
		}
	}
}
