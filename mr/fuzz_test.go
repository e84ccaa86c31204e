package mr

import (
	"testing"

	"github.com/amt-dev/amt/rgb"
)

// FuzzParse: Parse never panics; what it accepts has a canonical name that
// parses back to the same name, and applies to a small image.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"blur", "rotation:30,invert", "rot-5", "shear:85", "shear:85.0000001", ",", "rotation:1e400", "rotation:-0", "ROTATION : 5"} {
		f.Add(s)
	}
	img := rgb.New(3, 2)
	f.Fuzz(func(t *testing.T, spec string) {
		r, err := Parse(spec)
		if err != nil {
			return
		}
		r2, err := Parse(r.Name())
		if err != nil || r2.Name() != r.Name() {
			t.Fatalf("Parse(%q).Name() = %q does not round-trip: %v, %v", spec, r.Name(), r2, err)
		}
		if out := r.Apply(img); out.W != 3 || out.H != 2 {
			t.Fatalf("%s changed the size", r.Name())
		}
		r.ApplyBoxes([]rgb.Box{{X: 1, Y: 1, W: 1, H: 1}}, 3, 2)
	})
}
