package experiments

import (
	"math/rand/v2"
	"testing"

	"github.com/amt-dev/amt/mr"
)

// The audit schedule has exactly ⌊n·share⌋ audit iterations among the
// first n, spread evenly.
func TestAuditIteration(t *testing.T) {
	for _, tc := range []struct {
		share float64
		n     int
	}{{0.5, 100}, {1, 37}, {0.25, 1000}, {0.3, 50}, {0.999, 1000}} {
		k := 0
		for i := 0; i < tc.n; i++ {
			if auditIteration(i, tc.share) {
				k++
			}
		}
		if want := int(float64(tc.n) * tc.share); k != want {
			t.Errorf("share %g, %d iterations: %d audits, want %d", tc.share, tc.n, k, want)
		}
	}
}

// countingAgent counts its choices and updates.
type countingAgent struct{ chosen, updated int }

func (c *countingAgent) Choose([]float32, *rand.Rand) (Choice, error) {
	c.chosen++
	return Choice{Arm: 0, Param: -1, Prob: 1}, nil
}
func (c *countingAgent) Update([]float32, Choice, bool) error { c.updated++; return nil }

// The agent sees only its own iterations; audit choices are marked,
// uniform over the arms, and independent of the agent's random stream.
func TestAuditAgent(t *testing.T) {
	sc := mr.Hierarchical()
	for _, tc := range []struct {
		share      float64
		wantAgent  int
		wantAudits int
	}{{0, 400, 0}, {0.5, 200, 200}, {1, 0, 400}} {
		inner := &countingAgent{}
		a := withAudit(inner, sc, tc.share, 9)
		if tc.share == 0 && a != Agent(inner) {
			t.Fatal("share 0 wraps the agent")
		}
		rng := rand.New(rand.NewPCG(1, 2))
		audits, arms := 0, map[int]int{}
		for i := 0; i < 400; i++ {
			c, err := a.Choose(nil, rng)
			if err != nil {
				t.Fatal(err)
			}
			if c.Audit {
				audits++
				arms[c.Arm]++
				if _, err := sc.Variant(c.Arm, c.Param); err != nil {
					t.Fatalf("audit choice %+v: %v", c, err)
				}
			}
			if err := a.Update(nil, c, i%2 == 0); err != nil {
				t.Fatal(err)
			}
		}
		if audits != tc.wantAudits || inner.chosen != tc.wantAgent || inner.updated != tc.wantAgent {
			t.Errorf("share %g: %d audits, agent chose %d and learnt %d; want %d, %d", tc.share, audits, inner.chosen, inner.updated, tc.wantAudits, tc.wantAgent)
		}
		if tc.wantAudits > 0 && len(arms) != len(sc.Arms) {
			t.Errorf("share %g: audits drew %d of the %d arms", tc.share, len(arms), len(sc.Arms))
		}
		if tc.share == 1 && usesContext(a) {
			t.Error("a whole-session audit reads the context")
		}
	}
}

// Round-robin takes the arms in turn and each arm's values in turn.
func TestRoundRobin(t *testing.T) {
	sc := mr.Hierarchical()
	r := newRoundRobin(sc)
	seen := map[string]int{}
	n := len(sc.Arms) * 37 * 2
	for i := 0; i < n; i++ {
		c, _ := r.Choose(nil, nil)
		if c.Arm != i%len(sc.Arms) {
			t.Fatalf("choice %d: arm %d, want %d", i, c.Arm, i%len(sc.Arms))
		}
		v, err := sc.Variant(c.Arm, c.Param)
		if err != nil {
			t.Fatal(err)
		}
		seen[v.Key()]++
	}
	for _, v := range sc.Variants() {
		if seen[v.Key()] == 0 {
			t.Errorf("%s never chosen", v.Key())
		}
	}
	c := r.clone()
	a, _ := r.Choose(nil, nil)
	b, _ := c.Choose(nil, nil)
	if a != b {
		t.Errorf("a clone continues with %+v, the original with %+v", b, a)
	}
}
