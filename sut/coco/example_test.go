package coco_test

import (
	"fmt"

	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/sut/coco"
)

func ExampleImageAP() {
	gt := []coco.Annotation{
		{ID: 1, CategoryID: 18, Box: rgb.Box{X: 10, Y: 20, W: 100, H: 80}},
		{ID: 2, CategoryID: 18, Box: rgb.Box{X: 300, Y: 40, W: 50, H: 50}, IsCrowd: true},
	}
	dets := []coco.Detection{
		{CategoryID: 18, Score: 0.9, Box: rgb.Box{X: 12, Y: 20, W: 100, H: 80}}, // IoU ≈ 0.96
		{CategoryID: 18, Score: 0.8, Box: rgb.Box{X: 310, Y: 50, W: 20, H: 20}}, // inside the crowd: ignored
		{CategoryID: 3, Score: 0.7, Box: rgb.Box{X: 0, Y: 0, W: 5, H: 5}},       // no GT of category 3: free
	}
	ap, err := coco.ImageAP(gt, dets)
	if err != nil {
		panic(err)
	}
	fmt.Println(ap)
	noGT, _ := coco.ImageAP(nil, dets)
	fmt.Println(noGT)
	// Output:
	// 0.9999999999999998
	// -1
}
