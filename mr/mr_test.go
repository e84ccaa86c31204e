package mr

import (
	"math"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

func mustParse(t testing.TB, spec string) Relation {
	t.Helper()
	r, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ spec, name string }{
		{"blur", "blur"},
		{" Blur ", "blur"},
		{"rotation:30", "rotation:30"},
		{"rotation: -30", "rotation:-30"},
		{"rotation:2.5", "rotation:2.5"},
		{"rot-30", "rotation:-30"},
		{"rot30", "rotation:30"},
		{"shear20", "shear:20"},
		{"shear:-45", "shear:-45"},
		{"rotation:30,invert", "rotation:30,invert"},
		{"fliplr, flipud ,grayscale", "fliplr,flipud,grayscale"},
	} {
		r, err := Parse(tc.spec)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.spec, err)
			continue
		}
		if r.Name() != tc.name {
			t.Errorf("Parse(%q).Name() = %q, want %q", tc.spec, r.Name(), tc.name)
		}
		// The name parses back to the same relation.
		if r2 := mustParse(t, r.Name()); r2.Name() != r.Name() {
			t.Errorf("Parse(%q) round trip: %q", r.Name(), r2.Name())
		}
	}
	if _, ok := mustParse(t, "rotation:30,invert").(Compose); !ok {
		t.Error("a list of relations should parse to a Compose")
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"", "empty relation name"},
		{"sharpen", `unknown relation "sharpen" (known:`},
		{"rotatoin:30", `unknown relation "rotatoin"; did you mean "rotation"? (known:`},
		{"blur:3", `"blur" takes no parameter`},
		{"rotation", "needs an angle in degrees in [-360, 360]"},
		{"rotation:abc", `angle "abc" is not a number`},
		{"rotation:400", "out of range: want a finite value in [-360, 360]"},
		{"shear:90", "out of range: want a finite value in [-85, 85]"},
		{"shear:-86", "[-85, 85]"},
		{"rotation:NaN", "out of range"},
		{"rotation:+Inf", "out of range"},
		{"blur,,invert", `relation 2 of "blur,,invert": mr: empty relation name`},
		{"rot", "unknown relation"},
		{"rotx", "unknown relation"},
	} {
		_, err := Parse(tc.spec)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", tc.spec, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", tc.spec, err, tc.want)
		}
	}
}

func TestNew(t *testing.T) {
	if _, err := New("blur", 1); err == nil || !strings.Contains(err.Error(), "takes no parameter") {
		t.Errorf(`New("blur", 1) error = %v`, err)
	}
	if _, err := New("zoom", 1); err == nil || !strings.Contains(err.Error(), "known: blur, fliplr") {
		t.Errorf(`New("zoom", 1) error = %v`, err)
	}
	r, err := New("shear", -20)
	if err != nil || r != (Shear{Degrees: -20}) {
		t.Errorf(`New("shear", -20) = %v, %v`, r, err)
	}
	for _, in := range Relations() {
		p := 0.0
		if in.Parametric() {
			p = in.Param.Max
		}
		r, err := New(in.Name, p)
		if err != nil {
			t.Errorf("New(%q, %v): %v", in.Name, p, err)
			continue
		}
		if !strings.HasPrefix(r.Name(), in.Name) {
			t.Errorf("New(%q).Name() = %q", in.Name, r.Name())
		}
	}
}

// TestInvalidParamPanics: Apply on a hand-built out-of-range value panics
// with the range in the message instead of producing garbage.
func TestInvalidParamPanics(t *testing.T) {
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "[-85, 85]") {
			t.Errorf("panic = %v, want the allowed range", p)
		}
	}()
	Shear{Degrees: 90}.Apply(rgb.New(2, 2))
}

func allRelations() []Relation {
	var out []Relation
	for _, v := range Hierarchical().Variants() {
		r, err := ForVariant(v)
		if err != nil {
			panic(err)
		}
		out = append(out, r)
	}
	return append(out, Compose{Rotation{Degrees: 30}, Invert{}}, Compose{})
}

// TestApplyKeepsSourceAndSize: every relation on odd sizes, including
// degenerate 1-pixel and empty images, keeps the size and the source.
func TestApplyKeepsSourceAndSize(t *testing.T) {
	for _, sz := range [][2]int{{0, 0}, {1, 1}, {1, 5}, {5, 1}, {2, 2}, {7, 3}, {33, 17}} {
		src := goldentest.RandomImage(sz[0], sz[1], 7)
		orig := src.Clone()
		for _, r := range allRelations() {
			got := r.Apply(src)
			if got.W != src.W || got.H != src.H || got.Validate() != nil {
				t.Errorf("%s on %dx%d: got %dx%d (%v)", r.Name(), src.W, src.H, got.W, got.H, got.Validate())
			}
			if !src.Equal(orig) {
				t.Fatalf("%s modified its source", r.Name())
			}
		}
	}
}

func TestInvolutions(t *testing.T) {
	src := goldentest.RandomImage(31, 20, 1)
	for _, spec := range []string{"fliplr,fliplr", "flipud,flipud", "invert,invert", "rotation:0", "shear:0"} {
		if got := mustParse(t, spec).Apply(src); !got.Equal(src) {
			t.Errorf("%s is not the identity", spec)
		}
	}
	inv := Invert{}.Apply(src)
	for i, v := range src.Pix {
		if inv.Pix[i] != 255-v {
			t.Fatalf("invert: value %d is %d, want %d", i, inv.Pix[i], 255-v)
		}
	}
	// Grayscale is idempotent; blur and grayscale keep a flat image.
	g := Grayscale{}.Apply(src)
	if gg := (Grayscale{}).Apply(g); !gg.Equal(g) {
		t.Error("grayscale is not idempotent")
	}
	flat := rgb.New(9, 4)
	for i := range flat.Pix {
		flat.Pix[i] = 77
	}
	for _, r := range []Relation{Blur{}, Grayscale{}} {
		if !r.Apply(flat).Equal(flat) {
			t.Errorf("%s changed a flat grey image", r.Name())
		}
	}
}

// TestRightAngles: on a square image, rotation by 180 equals both flips and
// four quarter turns are the identity (the fixed-point warp is exact there).
func TestRightAngles(t *testing.T) {
	src := goldentest.RandomImage(32, 32, 2)
	if a, b := mustParse(t, "rotation:180").Apply(src), mustParse(t, "fliplr,flipud").Apply(src); !a.Equal(b) {
		t.Errorf("rotation:180 != fliplr,flipud (%d values differ)", countDiff(a.Pix, b.Pix))
	}
	if got := mustParse(t, "rotation:90,rotation:90,rotation:90,rotation:90").Apply(src); !got.Equal(src) {
		t.Error("four quarter turns are not the identity")
	}
	// Clockwise: the top-left pixel goes to the top-right corner.
	q := Rotation{Degrees: 90}.Apply(src)
	if q.Pix[(31)*3] != src.Pix[0] {
		t.Error("rotation:90 did not move the top-left pixel to the top-right corner")
	}
}

func boxesNear(t *testing.T, what string, got, want []rgb.Box, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d boxes, want %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.Abs(g.X-w.X) > tol || math.Abs(g.Y-w.Y) > tol || math.Abs(g.W-w.W) > tol || math.Abs(g.H-w.H) > tol {
			t.Errorf("%s box %d = %+v, want %+v", what, i, g, w)
		}
	}
}

func TestBoxes(t *testing.T) {
	boxes := []rgb.Box{{X: 2, Y: 4, W: 6, H: 8}, {X: -3.5, Y: 10.25, W: 40, H: 1}}
	const w, h = 32, 24
	for _, tc := range []struct {
		spec string
		want []rgb.Box
	}{
		{"blur", boxes},
		{"grayscale,invert", boxes},
		{"fliplr", []rgb.Box{{X: 31 - 8, Y: 4, W: 6, H: 8}, {X: 31 - 36.5, Y: 10.25, W: 40, H: 1}}},
		{"flipud", []rgb.Box{{X: 2, Y: 23 - 12, W: 6, H: 8}, {X: -3.5, Y: 23 - 11.25, W: 40, H: 1}}},
		{"fliplr,fliplr", boxes},
		{"flipud,fliplr,flipud,fliplr", boxes},
		// Clockwise quarter turn about (15.5, 11.5): x' = 27 - y, y' = x - 4.
		{"rotation:90", []rgb.Box{{X: 27 - 12, Y: -2, W: 8, H: 6}, {X: 27 - 11.25, Y: -7.5, W: 1, H: 40}}},
		{"rotation:90,rotation:-90", boxes},
		{"rotation:180", []rgb.Box{{X: 31 - 8, Y: 23 - 12, W: 6, H: 8}, {X: 31 - 36.5, Y: 23 - 11.25, W: 40, H: 1}}},
		// Shear keeps the centre row's x and scales y about the centre by cos.
		{"shear:60", []rgb.Box{
			{X: 2 - math.Sin(math.Pi/3)*(12-11.5), Y: 11.5 + (4-11.5)/2, W: 6 + math.Sin(math.Pi/3)*8, H: 4},
			{X: -3.5 - math.Sin(math.Pi/3)*(11.25-11.5), Y: 11.5 + (10.25-11.5)/2, W: 40 + math.Sin(math.Pi/3)*1, H: 0.5},
		}},
	} {
		got := mustParse(t, tc.spec).ApplyBoxes(boxes, w, h)
		boxesNear(t, tc.spec, got, tc.want, 1e-9)
	}
	// A rotation by a non-right angle grows a box into its hull.
	g := Rotation{Degrees: 30}.ApplyBoxes(boxes[:1], w, h)[0]
	if g.W <= 6 || g.H <= 8 {
		t.Errorf("rotation:30 hull %+v should be larger than 6x8", g)
	}
	if got := (Compose{}).ApplyBoxes(nil, w, h); got == nil || len(got) != 0 {
		t.Errorf("empty Compose on nil boxes = %#v, want empty slice", got)
	}
	in := append([]rgb.Box(nil), boxes...)
	for _, r := range allRelations() {
		r.ApplyBoxes(in, w, h)
	}
	boxesNear(t, "input after ApplyBoxes", in, boxes, 0)
}

// TestBlurMatchesReference: Blur equals a per-pixel 3×3 mean with
// reflect-101 borders on every size from 1×1 to 9×9 (the golden images are
// all 32×32 or larger).
func TestBlurMatchesReference(t *testing.T) {
	for w := 1; w <= 9; w++ {
		for h := 1; h <= 9; h++ {
			src := goldentest.RandomImage(w, h, uint64(10*w+h))
			got := Blur{}.Apply(src)
			for y := 0; y < h; y++ {
				for x := 0; x < w; x++ {
					for c := 0; c < 3; c++ {
						s := 0
						for dy := -1; dy <= 1; dy++ {
							for dx := -1; dx <= 1; dx++ {
								s += int(src.Pix[(reflect101Idx(y+dy, h)*w+reflect101Idx(x+dx, w))*3+c])
							}
						}
						if want := uint8(math.Round(float64(s) / 9)); got.Pix[(y*w+x)*3+c] != want {
							t.Fatalf("%dx%d: pixel (%d,%d) channel %d = %d, want %d", w, h, x, y, c, got.Pix[(y*w+x)*3+c], want)
						}
					}
				}
			}
		}
	}
}
