package mr_test

import (
	"fmt"

	"github.com/amt-dev/amt/mr"
	"github.com/amt-dev/amt/rgb"
	"github.com/amt-dev/amt/scenario"
)

func ExampleParse() {
	rel, err := mr.Parse("rotation:30,invert")
	if err != nil {
		panic(err)
	}
	img := rgb.New(32, 32)
	out := rel.Apply(img) // rotate clockwise by 30°, then invert
	boxes := rel.ApplyBoxes([]rgb.Box{{X: 8, Y: 8, W: 16, H: 16}}, img.W, img.H)
	fmt.Println(rel.Name(), out.W, out.H, len(boxes))

	_, err = mr.Parse("shear:89")
	fmt.Println(err)
	// Output:
	// rotation:30,invert 32 32 1
	// mr: shear angle 89 degrees is out of range: want a finite value in [-85, 85]
}

func ExampleNewScenario() {
	grid, err := scenario.ParseGrid("-10:10:5")
	if err != nil {
		panic(err)
	}
	sc, err := mr.NewScenario("small", scenario.Paper, []scenario.Arm{{Action: "fliplr"}, {Action: "rotation", Values: grid}})
	if err != nil {
		panic(err)
	}
	for _, v := range sc.Variants() {
		fmt.Println(v.Index, v.Arm, v.Param, v.Key())
	}
	// Output:
	// 0 0 -1 fliplr
	// 1 1 0 rotation:-10
	// 2 1 1 rotation:-5
	// 3 1 2 rotation:5
	// 4 1 3 rotation:10
}
