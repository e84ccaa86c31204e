package sut

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/amt-dev/amt/data"
	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/sut/coco"
)

// TestDatasetMAP runs yolov3-tiny on the whole 158-image COCO subset
// (images decoded with Go's image/jpeg) and reports the dataset-level COCO
// statistics. It is skipped in -short mode:
//
//	go test -run TestDatasetMAP -v ./sut/
func TestDatasetMAP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs yolov3-tiny on 158 images; skipped in -short mode")
	}
	dir := sharedpath.ForTest(t, "assets/coco_val2017_subset158")
	src, err := data.OpenCOCO(filepath.Join(dir, "instances_val2017_subset158.json"), "")
	if err != nil {
		t.Fatal(err)
	}
	d, err := LoadDetector(modelPath(t, "coco_yolov3-tiny.onnx"), DefaultDetectorConfig())
	if err != nil {
		t.Fatal(err)
	}
	ev, err := coco.NewEvaluator(coco.DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i := range src.Len() {
		c, err := src.Case(i)
		if err != nil {
			t.Fatal(err)
		}
		dets, err := d.Detect(c.Image)
		if err != nil {
			t.Fatalf("image %d: %v", c.ID, err)
		}
		gt := make([]Annotation, len(c.Annotations))
		for j, a := range c.Annotations {
			gt[j] = Annotation{ID: a.ID, CategoryID: a.CategoryID, Box: a.Box, Area: a.Area, IsCrowd: a.IsCrowd}
		}
		if err := ev.Add(int(c.ID), gt, dets); err != nil {
			t.Fatal(err)
		}
		if (i+1)%10 == 0 {
			t.Logf("%d/%d images, %.1f s", i+1, src.Len(), time.Since(start).Seconds())
		}
	}
	s := ev.Stats()
	t.Logf("yolov3-tiny on %d images (%.1f s/image): AP %.4f, AP50 %.4f, AP75 %.4f",
		src.Len(), time.Since(start).Seconds()/float64(src.Len()), s.AP, s.AP50, s.AP75)
	// yolov3-tiny's published COCO AP50 is 0.331; a broken pipeline scores
	// near 0.
	if s.AP < 0.08 || s.AP > 0.5 || s.AP50 < 0.2 || s.AP50 > 0.8 {
		t.Errorf("AP %.4f / AP50 %.4f outside the plausible range for yolov3-tiny (0.08–0.5 / 0.2–0.8)", s.AP, s.AP50)
	}
}
