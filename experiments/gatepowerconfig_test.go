package experiments

import (
	"slices"
	"strings"
	"testing"
)

const powerConfig = `power:
  pairs:
    - {name: same, old: models/m.onnx, new: models/m.onnx, reseed: true}
    - {name: flip, old: models/f.onnx, new: models/m.onnx, regressed: fliplr}
  budgets: [5, 10]
  cycles: 1-4
`

func TestPowerConfig(t *testing.T) {
	assets := fakeAssets(t)
	c, err := parseConfig([]byte(baseConfig+powerConfig), "exp/test.yaml", assets)
	if err != nil {
		t.Fatal(err)
	}
	p := c.Power
	if !c.Powering() || len(p.Pairs) != 2 || !p.Pairs[0].Reseed || p.Pairs[1].Regressed != "fliplr" || p.Pairs[0].Regressed != "" ||
		!slices.Equal(p.Budgets, []int{5, 10}) || len(p.Cycles) != 4 || p.Audit != 0.5 || !strings.HasSuffix(p.Pairs[1].Old, "models/f.onnx") {
		t.Errorf("power section read as %+v", p)
	}
	if c.Check.Audit != 1 {
		t.Errorf("check.audit defaults to %v, want 1", c.Check.Audit)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"typo", "reseed: true", "resed: true", `power.pairs[0].resed: unknown key; did you mean "reseed"?`},
		{"unknown relation", "regressed: fliplr", "regressed: flip", `power.pairs[1].regressed: "flip" is not a relation of the action set`},
		{"missing model", "new: models/m.onnx, reseed", "new: models/x.onnx, reseed", `power.pairs[0].new: file "models/x.onnx" not found`},
		{"same name", "name: flip", "name: same", `power.pairs[1].name: pair "same" given twice`},
		{"descending budgets", "[5, 10]", "[10, 5]", `power.budgets: 5 after 10: want an ascending list`},
		{"budget beyond the data", "[5, 10]", "[5, 11]", `power.budgets: 11 is more than passes × data.limit = 10`},
		{"no cycles", "  cycles: 1-4\n", "", `power.cycles: missing required key`},
		{"audit", "  cycles: 1-4\n", "  cycles: 1-4\n  audit: 1\n", `power.audit: "1" is not`},
		{"with a regression", "power:", "regression:\n  sut: {model: models/m.onnx, input_size: 224}\npower:", `a gate power study names its models in power.pairs`},
	} {
		doc := strings.Replace(baseConfig+powerConfig, tc.old, tc.new, 1)
		if doc == baseConfig+powerConfig {
			t.Fatalf("%s: replacement did not apply", tc.name)
		}
		_, err := parseConfig([]byte(doc), "exp/test.yaml", assets)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v\nwant an error containing %q", tc.name, err, tc.want)
		}
	}
}
