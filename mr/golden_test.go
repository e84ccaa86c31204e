package mr

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// relationFor builds the relation of a golden row (mr, param columns).
func relationFor(t *testing.T, name, param string) Relation {
	t.Helper()
	p := 0.0
	if param != "" {
		var err error
		if p, err = strconv.ParseFloat(param, 64); err != nil {
			t.Fatal(err)
		}
	}
	r, err := New(name, p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestGoldenCIFAR reproduces all 59 variants of the 8 golden CIFAR images
// exactly (imgaug 0.2.6 / OpenCV 4.6 output).
func TestGoldenCIFAR(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/mr")
	raw, err := os.ReadFile(filepath.Join(dir, "images_8x60x32x32x3.u8"))
	if err != nil {
		t.Fatal(err)
	}
	const n, nv, sz = 8, 60, 32 * 32 * 3
	if len(raw) != n*nv*sz {
		t.Fatalf("golden file has %d bytes, want %d", len(raw), n*nv*sz)
	}
	rows := goldentest.ReadCSV(t, filepath.Join(dir, "index.csv")).Maps()
	if len(rows) != nv {
		t.Fatalf("index.csv has %d rows, want %d", len(rows), nv)
	}
	hier := Hierarchical().Variants()
	for v := 1; v < nv; v++ {
		row := rows[v]
		rel := relationFor(t, row["mr"], row["param"])
		if got := hier[v-1].Key(); got != rel.Name() {
			t.Errorf("hierarchical variant %d = %s, golden index says %s", v-1, got, rel.Name())
		}
		for i := 0; i < n; i++ {
			src := rgb.Image{W: 32, H: 32, Pix: raw[(i*nv)*sz:][:sz]}
			want := raw[(i*nv+v)*sz:][:sz]
			got := rel.Apply(src)
			if d := countDiff(got.Pix, want); d != 0 {
				t.Errorf("image %d %s: %d of %d values differ", i, rel.Name(), d, sz)
			}
		}
	}
}

func countDiff(a, b []uint8) int {
	d := 0
	for i := range a {
		if a[i] != b[i] {
			d++
		}
	}
	return d
}

// TestGoldenDetectionImage transforms COCO image 22192 (640×426) by all 59
// MRs and checks sha256, byte sum and two sample pixels of each result.
func TestGoldenDetectionImage(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	src := goldentest.ReadPNG(t, filepath.Join(dir, "mr_22192_decoded_rgb.png"))
	orig := src.Clone()
	rows := goldentest.ReadCSV(t, filepath.Join(dir, "mr_22192_results.csv")).Maps()
	if len(rows) != 59 {
		t.Fatalf("mr_22192_results.csv has %d rows, want 59", len(rows))
	}
	for _, row := range rows {
		rel := relationFor(t, row["mr"], row["param"])
		got := rel.Apply(src)
		sum := sha256.Sum256(got.Pix)
		var bytesum int
		for _, v := range got.Pix {
			bytesum += int(v)
		}
		if h := hex.EncodeToString(sum[:]); h != row["transformed_rgb_sha256"] {
			t.Errorf("%s: sha256 %s, want %s", rel.Name(), h, row["transformed_rgb_sha256"])
		}
		if s := strconv.Itoa(bytesum); s != row["transformed_rgb_sum"] {
			t.Errorf("%s: byte sum %s, want %s", rel.Name(), s, row["transformed_rgb_sum"])
		}
		for _, col := range []string{"pixel_row213_col320", "pixel_row142_col160"} {
			var y, x int
			if _, err := fmt.Sscanf(col, "pixel_row%d_col%d", &y, &x); err != nil {
				t.Fatal(err)
			}
			i := (y*got.W + x) * 3
			px := fmt.Sprintf("%d|%d|%d", got.Pix[i], got.Pix[i+1], got.Pix[i+2])
			if px != row[col] {
				t.Errorf("%s: %s = %s, want %s", rel.Name(), col, px, row[col])
			}
		}
	}
	if !src.Equal(orig) {
		t.Fatal("Apply modified its source image")
	}
}

// TestGoldenDetectionBoxes checks the ground-truth box transforms of image
// 22192 against imgaug 0.2.6's output (written with repr, exact doubles).
func TestGoldenDetectionBoxes(t *testing.T) {
	dir := sharedpath.ForTest(t, "golden/detection")
	const w, h = 640, 426
	rows := goldentest.ReadCSV(t, filepath.Join(dir, "mr_22192_gt.csv")).Maps()
	parse := func(row map[string]string) rgb.Box {
		var v [4]float64
		for i, k := range []string{"x", "y", "w", "h"} {
			f, err := strconv.ParseFloat(row[k], 64)
			if err != nil {
				t.Fatal(err)
			}
			v[i] = f
		}
		return rgb.Box{X: v[0], Y: v[1], W: v[2], H: v[3]}
	}
	var orig []rgb.Box
	type key struct{ mr, param string }
	want := map[key][]rgb.Box{}
	var order []key
	for _, row := range rows {
		if row["mr"] == "none" {
			orig = append(orig, parse(row))
			continue
		}
		k := key{row["mr"], row["param"]}
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		want[k] = append(want[k], parse(row))
	}
	if len(orig) == 0 || len(order) != 59 {
		t.Fatalf("got %d original boxes and %d MRs, want >0 and 59", len(orig), len(order))
	}
	var maxErr float64
	for _, k := range order {
		rel := relationFor(t, k.mr, k.param)
		got := rel.ApplyBoxes(orig, w, h)
		if len(got) != len(want[k]) {
			t.Fatalf("%s: %d boxes, want %d", rel.Name(), len(got), len(want[k]))
		}
		for i, g := range got {
			wb := want[k][i]
			for j, d := range []float64{g.X - wb.X, g.Y - wb.Y, g.W - wb.W, g.H - wb.H} {
				if d < 0 {
					d = -d
				}
				if d > maxErr {
					maxErr = d
				}
				// Bit-exact is achieved; 1e-9 px is the documented tolerance.
				if d > 1e-9 {
					t.Errorf("%s box %d field %d: got %v, want %v", rel.Name(), i, j, g, wb)
				}
			}
		}
	}
	if maxErr != 0 {
		t.Errorf("boxes are within tolerance but not bit-exact: max |error| = %g px", maxErr)
	}
}
