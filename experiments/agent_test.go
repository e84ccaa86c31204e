package experiments

import (
	"reflect"
	"testing"

	"github.com/amt-dev/amt/bandit"
)

// The scenarios handed to package bandit equal its own built-in ones (same
// arms, grids, fixed parameters and rewards), so agents learn with the
// paper's rewards whichever way a scenario was described.
func TestBanditScenarioMatchesBuiltin(t *testing.T) {
	for _, name := range ScenarioNames() {
		got := BanditScenario(mustScenario(t, name))
		want, err := bandit.ScenarioByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != want.Name || !reflect.DeepEqual(got.Arms, want.Arms) || got.ParamMax != want.ParamMax {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got.Arms, want.Arms)
		}
		for _, d := range []float64{-90, -5, 20} {
			if got.ParamReward(d) != want.ParamReward(d) {
				t.Errorf("%s: parameter reward at %v", name, d)
			}
		}
	}
}
