package plots

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func TestCDGroups(t *testing.T) {
	for _, tc := range []struct {
		ranks []float64
		cd    float64
		want  string
	}{
		// 3.9 − 3.0 < 1 joins the last three; 3.0 − 1.5 ≥ 1 splits them
		// from the first two.
		{[]float64{1.2, 1.5, 3.0, 3.1, 3.9}, 1.0, "[[0 1] [2 3 4]]"},
		// The same, unsorted: groups list indices in ascending rank.
		{[]float64{3.9, 1.2, 3.0, 1.5, 3.1}, 1.0, "[[1 3] [2 4 0]]"},
		// Demšar §3.2.4 (printed mean ranks of C4.5, C4.5+m, C4.5+cf,
		// C4.5+m+cf): one group at α = 0.05 (CD 1.25); at α = 0.10 (CD
		// 1.12) C4.5 is worse than C4.5+m and C4.5+m+cf, and C4.5+cf
		// belongs to both groups (his Fig. 1).
		{[]float64{3.143, 2.000, 2.893, 1.964}, 1.25, "[[3 1 2 0]]"},
		{[]float64{3.143, 2.000, 2.893, 1.964}, 1.12, "[[3 1 2] [2 0]]"},
		// A chain: overlapping pairs, none inside another.
		{[]float64{1, 1.6, 2.2, 2.8}, 1, "[[0 1] [1 2] [2 3]]"},
		// A difference of exactly CD is significant.
		{[]float64{1, 2}, 1, "[]"},
		{[]float64{1, 3, 5}, 1, "[]"},
		{[]float64{2, 2, 2}, 0.5, "[[0 1 2]]"},
		{[]float64{1.5, 2.5, 2}, 0, "[]"},
		// A group inside a larger one is dropped.
		{[]float64{1, 1.2, 1.4, 3}, 0.5, "[[0 1 2]]"},
		{[]float64{1, 1.9, 2.0, 2.1, 4}, 1.15, "[[0 1 2 3]]"},
		{[]float64{1, 1.9, 2.0, 2.1, 4}, 1.05, "[[0 1 2] [1 2 3]]"},
	} {
		if got := fmt.Sprint(cdGroups(tc.ranks, tc.cd)); got != tc.want {
			t.Errorf("cdGroups(%v, %v) = %s; want %s", tc.ranks, tc.cd, got, tc.want)
		}
	}
}

// checkPNG decodes a PNG file and checks its size is plausible.
func checkPNG(t *testing.T, path string, minW, minH int) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r := img.Bounds(); r.Dx() < minW || r.Dy() < minH || r.Dx() > 4000 || r.Dy() > 4000 {
		t.Errorf("%s is %v", path, r.Size())
	}
	return b
}

// renderTwice renders with f into dir/name twice and checks both renders
// are the same bytes; it returns them.
func renderTwice(t *testing.T, dir, name string, f func(path string) error) []byte {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := f(p); err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f(p); err != nil {
		t.Fatal(err)
	}
	second, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("%s differs between two renders of the same input", name)
	}
	if *keep != "" {
		if err := os.MkdirAll(*keep, 0o755); err == nil {
			os.WriteFile(filepath.Join(*keep, name), first, 0o644)
		}
	}
	return first
}

func TestCDDiagram(t *testing.T) {
	dir := t.TempDir()
	// Demšar's example at α = 0.10 (his Fig. 1, top).
	names := []string{"C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf"}
	ranks := []float64{3.143, 2.000, 2.893, 1.964}
	renderTwice(t, dir, "cd-demsar.png", func(p string) error {
		return CDDiagram(p, "Nemenyi, α = 0.10", names, ranks, 1.12)
	})
	checkPNG(t, filepath.Join(dir, "cd-demsar.png"), 800, 200)
	// More algorithms, overlapping groups, a long name.
	many := []string{"random", "cover", "thompson-sampling", "ucb1", "epsilon-greedy", "exp3", "oracle", "round-robin", "softmax"}
	mr := []float64{7.4, 5.1, 2.2, 2.6, 4.0, 4.9, 1.3, 8.1, 5.4}
	renderTwice(t, dir, "cd-many.png", func(p string) error { return CDDiagram(p, "Mean rank over 20 environments", many, mr, 2.69) })
	checkPNG(t, filepath.Join(dir, "cd-many.png"), 800, 250)
	svg := renderTwice(t, dir, "cd-many.svg", func(p string) error { return CDDiagram(p, "", many, mr, 2.69) })
	if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("thompson-sampling")) {
		t.Errorf("cd-many.svg is not a plausible SVG (%d bytes)", len(svg))
	}
	// Two algorithms, no CD bar and no group; twenty, on a wider axis.
	renderTwice(t, dir, "cd-two.png", func(p string) error { return CDDiagram(p, "", []string{"a", "b"}, []float64{1.25, 1.75}, 0) })
	checkPNG(t, filepath.Join(dir, "cd-two.png"), 800, 80)
	var twenty []string
	var tr []float64
	for i := 0; i < 20; i++ {
		twenty = append(twenty, fmt.Sprintf("agent-%02d", i))
		tr = append(tr, 1+float64((i*7)%20)*0.95)
	}
	renderTwice(t, dir, "cd-twenty.png", func(p string) error { return CDDiagram(p, "Twenty", twenty, tr, 3.5) })
	checkPNG(t, filepath.Join(dir, "cd-twenty.png"), 1500, 300)
	for _, bad := range []struct {
		names []string
		ranks []float64
		cd    float64
	}{
		{[]string{"a"}, []float64{1}, 1},
		{[]string{"a", "b"}, []float64{1}, 1},
		{[]string{"a", "b"}, []float64{1, math.NaN()}, 1},
		{[]string{"a", "b"}, []float64{1, 2}, -1},
		{[]string{"a", "b"}, []float64{1, 2}, math.NaN()},
	} {
		if err := CDDiagram(filepath.Join(dir, "bad.png"), "", bad.names, bad.ranks, bad.cd); err == nil {
			t.Errorf("CDDiagram(%v, %v, %v): no error", bad.names, bad.ranks, bad.cd)
		}
	}
}
