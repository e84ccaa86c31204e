package main

import (
	"strings"
	"testing"

	"github.com/amt-dev/amt/mr"
)

func TestMRs(t *testing.T) {
	out, _, err := tfRun(t, "mrs")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range mr.Relations() {
		name := in.Name
		if in.Parametric() {
			name += ":" + in.Param.Symbol
		}
		if !strings.Contains(out, "\n  "+name+" ") || !strings.Contains(out, in.Summary) {
			t.Errorf("relation %s not listed", name)
		}
	}
	for _, want := range []string{
		"angle in degrees in [-360, 360], halving reward every 5 degrees",
		"angle in degrees in [-85, 85]",
		"hierarchical: 7 arms, 59 variants, reward unit",
		"rotation: 36 arms, 36 variants, reward halving",
		"\n  halving: ",
		"rotation[rotation -90:90:5, 36 values], shear[shear -45:45:5, 18 values]",
		"basic: 9 arms, 9 variants",
		"rotation:-30, rotation:30, shear:-20, shear:20",
		"rotation: 36 arms, 36 variants",
		"rotation:DEG for DEG in -90:90:5",
		"shear: 18 arms, 18 variants",
		"\n  corruptions: ",
		"\n  corruptions-flat: ",
		"severity in level in [1, 5], halving reward every 1 level (in the corruptions scenarios)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = tfRun(t, "mrs", "-variants")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "5=rotation:-90") || !strings.Contains(out, "58=shear:45") {
		t.Errorf("-variants output lacks the hierarchical variant indices:\n%s", out)
	}
	if _, _, err := tfRun(t, "mrs", "extra"); err == nil || !strings.Contains(err.Error(), "takes no arguments") {
		t.Errorf("mrs extra: error %v", err)
	}
}
