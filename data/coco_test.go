package data

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/rgb"
)

// cocoFixture writes a small COCO data set (JSON + JPEG/PNG images) into a
// temporary folder and returns the JSON path.
func cocoFixture(t *testing.T, doc string, images map[string]image.Image) string {
	t.Helper()
	dir := t.TempDir()
	for name, m := range images {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, ".png") {
			err = png.Encode(f, m)
		} else {
			err = jpeg.Encode(f, m, &jpeg.Options{Quality: 95})
		}
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	p := filepath.Join(dir, "instances.json")
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const smallCOCO = `{
 "info": {"description": "test"},
 "images": [
  {"id": 7, "file_name": "a.png", "width": 20, "height": 10},
  {"id": 3, "file_name": "b.jpg", "width": 16, "height": 16},
  {"id": 9, "file_name": "c.png", "width": 20, "height": 10}
 ],
 "annotations": [
  {"id": 100, "image_id": 3, "category_id": 5, "bbox": [1, 2, 3, 4], "iscrowd": 0, "area": 12, "segmentation": [[1,2,3,4]]},
  {"id": 101, "image_id": 7, "category_id": 1, "bbox": [-5, 8, 40, 9.5], "iscrowd": 1, "area": 99.5, "segmentation": {"counts": [1], "size": [10, 20]}},
  {"id": 99, "image_id": 3, "category_id": 1, "bbox": [0.5, 0.25, 10, 10], "iscrowd": 0, "area": 100}
 ],
 "categories": [{"id": 5, "name": "five"}, {"id": 1, "name": "one"}]
}`

func smallCOCOImages() map[string]image.Image {
	return map[string]image.Image{
		"a.png": testImage(20, 10, 1),
		"b.jpg": image.NewGray(image.Rect(0, 0, 16, 16)), // a grey-scale JPEG
		"c.png": testImage(20, 10, 2),
	}
}

func TestCOCOSmall(t *testing.T) {
	p := cocoFixture(t, smallCOCO, smallCOCOImages())
	c, err := OpenCOCO(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 3 {
		t.Fatalf("Len = %d", c.Len())
	}
	cats := c.Categories()
	if len(cats) != 2 || cats[0].ID != 1 || cats[0].Name != "one" || cats[1].ID != 5 || cats[0].Count != 2 || cats[0].Images != 2 || cats[1].Count != 1 {
		t.Errorf("categories %+v, want id 1 then 5 with counts", cats)
	}
	// Image order is the file's; annotations in file order per image.
	cs, err := c.Case(1)
	if err != nil {
		t.Fatal(err)
	}
	want := []Annotation{
		{ID: 100, CategoryID: 5, Class: 1, Box: rgb.Box{X: 1, Y: 2, W: 3, H: 4}, Area: 12},
		{ID: 99, CategoryID: 1, Class: 0, Box: rgb.Box{X: 0.5, Y: 0.25, W: 10, H: 10}, Area: 100},
	}
	if cs.ID != 3 || cs.Name != "b.jpg" || cs.Label != -1 || cs.Unannotated || len(cs.Annotations) != 2 {
		t.Fatalf("case 1 = %+v", cs)
	}
	for i := range want {
		if cs.Annotations[i] != want[i] {
			t.Errorf("annotation %d = %+v, want %+v", i, cs.Annotations[i], want[i])
		}
	}
	// The grey-scale JPEG is decoded to RGB with equal channels.
	if cs.Image.W != 16 || cs.Image.H != 16 || cs.Image.Pix[0] != cs.Image.Pix[1] || cs.Image.Pix[1] != cs.Image.Pix[2] {
		t.Errorf("grey JPEG decoded to %dx%d %v", cs.Image.W, cs.Image.H, cs.Image.Pix[:3])
	}
	// A box reaching outside the image is kept as is; crowd flag.
	cs0, err := c.Case(0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs0.Annotations) != 1 || cs0.Annotations[0].Box != (rgb.Box{X: -5, Y: 8, W: 40, H: 9.5}) || !cs0.Annotations[0].IsCrowd {
		t.Errorf("case 0 annotations %+v", cs0.Annotations)
	}
	if !cs0.Image.Equal(testImage(20, 10, 1)) {
		t.Error("PNG image 0 not decoded exactly")
	}
	// An image without annotations is kept and marked.
	cs2, err := c.Case(2)
	if err != nil {
		t.Fatal(err)
	}
	if !cs2.Unannotated || cs2.Annotations == nil || len(cs2.Annotations) != 0 {
		t.Errorf("case 2: Unannotated %v annotations %v", cs2.Unannotated, cs2.Annotations)
	}
	info := c.Info()
	if info.Format != "coco" || info.Len != 3 || info.Annotations != 3 || info.Crowd != 1 || info.Unannotated != 1 || info.ImageDir != filepath.Dir(p) {
		t.Errorf("Info = %+v", info)
	}
	if i, ok := c.ClassOf(5); !ok || i != 1 {
		t.Errorf("ClassOf(5) = %d, %v", i, ok)
	}
	// Case returns a copy: changing it does not change the source.
	cs.Annotations[0].Box.X = 1000
	if again, _ := c.Case(1); again.Annotations[0].Box.X != 1 {
		t.Error("Case shares its annotations with the source")
	}
}

func TestCOCOErrors(t *testing.T) {
	edit := func(old, new string) string {
		if !strings.Contains(smallCOCO, old) {
			t.Fatalf("fixture lacks %q", old)
		}
		return strings.Replace(smallCOCO, old, new, 1)
	}
	tests := []struct {
		name, doc string
		want      []string // substrings of the error
	}{
		{"malformed", edit(`"width": 16,`, `"width": 16,,`), []string{"instances.json:5:48:", "malformed JSON"}},
		{"truncated", smallCOCO[:200], []string{"instances.json:", "unexpected end"}},
		{"wrong type", edit(`"bbox": [1, 2, 3, 4]`, `"bbox": "1 2 3 4"`), []string{"instances.json:9:", "bbox", "string"}},
		{"unknown category", edit(`"category_id": 5,`, `"category_id": 6,`), []string{"annotations[0] (id 100)", "unknown category_id 6"}},
		{"unknown image", edit(`"image_id": 7,`, `"image_id": 8,`), []string{"annotations[1] (id 101)", "image_id 8 is not in images"}},
		{"bbox 3 numbers", edit(`[1, 2, 3, 4]`, `[1, 2, 3]`), []string{"annotations[0]", "bbox has 3 numbers"}},
		{"negative width", edit(`[1, 2, 3, 4]`, `[1, 2, -3, 4]`), []string{"annotations[0]", "negative width"}},
		{"duplicate image id", edit(`"id": 9,`, `"id": 7,`), []string{"images[2]", "duplicate id 7"}},
		{"duplicate category", edit(`{"id": 1, "name": "one"}`, `{"id": 5, "name": "one"}`), []string{"categories: duplicate id 5"}},
		{"no size", edit(`"width": 16`, `"width": 0`), []string{"images[1] (id 3, b.jpg)", "width 0"}},
		{"no file name", edit(`"file_name": "c.png", `, ``), []string{"images[2] (id 9)", "file_name"}},
		{"escaping file name", edit(`"c.png"`, `"../c.png"`), []string{"images[2]", "plain name"}},
		{"no annotations", edit(`"annotations"`, `"annotationz"`), []string{`no "annotations"`}},
		{"iscrowd 2", edit(`"iscrowd": 1`, `"iscrowd": 2`), []string{"annotations[1]", "iscrowd is 2"}},
		{"trailing data", smallCOCO + " {}", []string{"extra data"}},
		{"not an object", `[1, 2]`, []string{"instances.json:1:", "array"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := cocoFixture(t, tt.doc, smallCOCOImages())
			_, err := OpenCOCO(p, "")
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestCOCOFiles(t *testing.T) {
	// A missing image file is reported when opening.
	imgs := smallCOCOImages()
	delete(imgs, "c.png")
	p := cocoFixture(t, smallCOCO, imgs)
	// Image folder found from the first image, so put a.png there.
	_, err := OpenCOCO(p, "")
	if err == nil || !strings.Contains(err.Error(), "1 of the 3 images") || !strings.Contains(err.Error(), "c.png") {
		t.Errorf("missing image: error %v", err)
	}
	// A wrong image size in the JSON is reported by Case.
	p = cocoFixture(t, strings.Replace(smallCOCO, `"width": 20, "height": 10},
  {"id": 3`, `"width": 21, "height": 10},
  {"id": 3`, 1), smallCOCOImages())
	c, err := OpenCOCO(p, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Case(0); err == nil || !strings.Contains(err.Error(), "decoded size 20×10 differs from width×height 21×10") {
		t.Errorf("wrong size: error %v", err)
	}
	// A corrupt image is reported by Case with its path.
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "c.png"), []byte("\x89PNG\r\n\x1a\nbroken"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Case(2); err == nil || !strings.Contains(err.Error(), "c.png") {
		t.Errorf("corrupt image: error %v", err)
	}
	// The image folder is found in val2017/ beside the JSON.
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "val2017"), 0o755); err != nil {
		t.Fatal(err)
	}
	src := filepath.Dir(p)
	for _, n := range []string{"a.png", "b.jpg", "c.png", "instances.json"} {
		b, _ := os.ReadFile(filepath.Join(src, n))
		to := filepath.Join(dir, "val2017", n)
		if n == "instances.json" {
			to = filepath.Join(dir, n)
		}
		os.WriteFile(to, b, 0o644)
	}
	c, err = OpenCOCO(filepath.Join(dir, "instances.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Info().ImageDir != filepath.Join(dir, "val2017") {
		t.Errorf("image folder %s", c.Info().ImageDir)
	}
	if _, err := OpenCOCO(filepath.Join(dir, "instances.json"), filepath.Join(dir, "nope")); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("bad image folder: error %v", err)
	}
	os.Rename(filepath.Join(dir, "val2017"), filepath.Join(dir, "elsewhere"))
	if _, err := OpenCOCO(filepath.Join(dir, "instances.json"), ""); err == nil || !strings.Contains(err.Error(), "cannot find the image folder") {
		t.Errorf("no image folder: error %v", err)
	}
}

// TestDecodeOddImages checks CMYK and grey JPEGs and alpha and palette
// PNGs against Pillow's convert("RGB") (fixtures from testdata/gen_fixtures.py).
func TestDecodeOddImages(t *testing.T) {
	tests := []struct {
		file    string
		maxDiff int // largest allowed per-channel difference
	}{
		{"cmyk.jpg", 2},    // Go's CMYK→RGB rounding and IDCT differ slightly
		{"gray.jpg", 1},    // IDCT differences
		{"rgba.png", 0},    // alpha dropped, as Pillow does
		{"palette.png", 0}, // palette colours
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Decoder{}.DecodeFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			wantFile := strings.TrimSuffix(tt.file, filepath.Ext(tt.file)) + ".want.png"
			want, err := Decoder{}.DecodeFile(filepath.Join("testdata", wantFile))
			if err != nil {
				t.Fatal(err)
			}
			if got.W != want.W || got.H != want.H {
				t.Fatalf("size %dx%d, want %dx%d", got.W, got.H, want.W, want.H)
			}
			worst := 0
			for i := range got.Pix {
				worst = max(worst, absDiff(got.Pix[i], want.Pix[i]))
			}
			t.Logf("max difference from Pillow: %d", worst)
			if worst > tt.maxDiff {
				t.Errorf("max difference from Pillow %d, want <= %d", worst, tt.maxDiff)
			}
		})
	}
	if _, err := DecodeImage(strings.NewReader("GIF89a....")); err == nil || !strings.Contains(err.Error(), "not a PNG or JPEG") {
		t.Errorf("GIF: error %v", err)
	}
}

func absDiff(a, b uint8) int {
	if a > b {
		return int(a - b)
	}
	return int(b - a)
}

// TestCOCOSubset checks the shared 158-image subset against the detection
// golden: counts, the class index table, image 22192's ground truth, and
// Go's JPEG decoding against Pillow's.
func TestCOCOSubset(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	golden := sharedpath.ForTest(t, "golden/detection")
	c, err := OpenCOCO(filepath.Join(assets, "coco_val2017_subset158", "instances_val2017_subset158.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	info := c.Info()
	if info.Len != 158 || info.Annotations != 1424 || info.Crowd != 16 || len(info.Classes) != 80 || info.Unannotated != 0 {
		t.Errorf("Info: %d images, %d annotations, %d crowd, %d categories, %d unannotated; want 158, 1424, 16, 80, 0",
			info.Len, info.Annotations, info.Crowd, len(info.Classes), info.Unannotated)
	}
	var meta struct {
		ClassToCat []int `json:"class_index_to_category_id"`
		MRImage    struct {
			ID     int64 `json:"image_id"`
			Width  int   `json:"width"`
			Height int   `json:"height"`
		} `json:"mr_image"`
	}
	raw, err := os.ReadFile(filepath.Join(golden, "images.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &meta); err != nil {
		t.Fatal(err)
	}
	if len(meta.ClassToCat) != 80 {
		t.Fatalf("golden class table has %d entries", len(meta.ClassToCat))
	}
	for i, id := range meta.ClassToCat {
		if info.Classes[i].ID != id {
			t.Errorf("class %d is category %d, want %d", i, info.Classes[i].ID, id)
		}
	}
	idx := -1
	for i := 0; i < c.Len(); i++ {
		if c.images[i].ID == meta.MRImage.ID {
			idx = i
		}
	}
	if idx < 0 {
		t.Fatalf("image %d not in the subset", meta.MRImage.ID)
	}
	cs, err := c.Case(idx)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Image.W != meta.MRImage.Width || cs.Image.H != meta.MRImage.Height {
		t.Errorf("decoded %dx%d, want %dx%d", cs.Image.W, cs.Image.H, meta.MRImage.Width, meta.MRImage.Height)
	}
	// Ground truth: the "none" rows of mr_22192_gt.csv, in order.
	f, err := os.Open(filepath.Join(golden, "mr_22192_gt.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var gt []Annotation
	for _, r := range rows[1:] {
		if r[0] != "none" {
			continue
		}
		id, _ := strconv.ParseInt(r[2], 10, 64)
		cat, _ := strconv.Atoi(r[3])
		var box [4]float64
		for k := range box {
			box[k], _ = strconv.ParseFloat(r[5+k], 64)
		}
		gt = append(gt, Annotation{ID: id, CategoryID: cat, IsCrowd: r[4] == "1", Box: rgb.Box{X: box[0], Y: box[1], W: box[2], H: box[3]}})
	}
	if len(gt) != len(cs.Annotations) || len(gt) == 0 {
		t.Fatalf("%d annotations, golden has %d", len(cs.Annotations), len(gt))
	}
	for i, g := range gt {
		a := cs.Annotations[i]
		if a.ID != g.ID || a.CategoryID != g.CategoryID || a.IsCrowd != g.IsCrowd || a.Box != g.Box {
			t.Errorf("annotation %d = %+v, want %+v", i, a, g)
		}
	}
	// Go's decoder vs Pillow/libjpeg-turbo: small mean difference.
	pil, err := Decoder{}.DecodeFile(filepath.Join(golden, "mr_22192_decoded_rgb.png"))
	if err != nil {
		t.Fatal(err)
	}
	if pil.W != cs.Image.W || pil.H != cs.Image.H {
		t.Fatalf("golden PNG is %dx%d", pil.W, pil.H)
	}
	sum, worst := 0, 0
	for i := range pil.Pix {
		d := absDiff(pil.Pix[i], cs.Image.Pix[i])
		sum += d
		worst = max(worst, d)
	}
	mean := float64(sum) / float64(len(pil.Pix))
	t.Logf("image 22192: Go vs Pillow decoding: mean |diff| %.3f, max %d", mean, worst)
	if mean >= 1 || worst > 8 {
		t.Errorf("Go's JPEG decoding differs from Pillow's by %.3f on average (max %d), want < 1 (max <= 8)", mean, worst)
	}
}

func FuzzCOCOJSON(f *testing.F) {
	f.Add([]byte(smallCOCO))
	f.Add([]byte(`{"images": [], "annotations": [], "categories": []}`))
	f.Add([]byte(`{"images": [{"id": 1, "file_name": "x.jpg", "width": 1, "height": 1}], "annotations": [{"id": 1, "image_id": 1, "category_id": 1, "bbox": [0,0,1,1]}], "categories": [{"id": 1}]}`))
	f.Add([]byte(`{"images": null}`))
	f.Add([]byte(`{`))
	f.Add([]byte("{\n\"images\": [1e400]}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := ParseCOCO(raw, "fuzz.json")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not start with the file name", err)
			}
			return
		}
		info := c.Info()
		n := 0
		for i := 0; i < c.Len(); i++ {
			for _, a := range c.Annotations(i) {
				if a.Class < 0 || a.Class >= len(info.Classes) || info.Classes[a.Class].ID != a.CategoryID {
					t.Fatalf("annotation %+v has a bad class", a)
				}
				n++
			}
		}
		if n != info.Annotations {
			t.Fatalf("%d annotations, Info says %d", n, info.Annotations)
		}
	})
}

func BenchmarkDecodeCOCOJPEG(b *testing.B) {
	assets := sharedpath.ForTest(b, "assets")
	p := filepath.Join(assets, "coco_val2017_subset158", "val2017", "000000022192.jpg")
	raw, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeImage(bytes.NewReader(raw)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestConcurrentCases decodes every case from several goroutines at once
// (run with -race) and checks they agree with sequential decoding.
func TestConcurrentCases(t *testing.T) {
	c, err := OpenCOCO(cocoFixture(t, smallCOCO, smallCOCOImages()), "")
	if err != nil {
		t.Fatal(err)
	}
	var want []Case
	for i := range c.Len() {
		cs, err := c.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, cs)
	}
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			for i := range c.Len() {
				cs, err := c.Case(i)
				if err == nil && (!cs.Image.Equal(want[i].Image) || len(cs.Annotations) != len(want[i].Annotations)) {
					err = fmt.Errorf("case %d differs when decoded concurrently", i)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
