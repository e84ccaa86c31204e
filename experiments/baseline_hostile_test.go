package experiments

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/experiments/record"
	"github.com/amt-dev/amt/mr"
)

// TestHostileBaselines checks that amt check's baseline reader refuses a
// corrupt baseline (#34, class 3) instead of letting its MRs go "not
// compared" or pass: counts that break Counts.Check, and an agent id that
// leaves the folder.
func TestHostileBaselines(t *testing.T) {
	src := filepath.Join("..", "results", "rq1-classification")
	m, err := record.ReadMeta(filepath.Join(src, record.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	copyBaseline := func(t *testing.T) string {
		dir := t.TempDir()
		b, _ := os.ReadFile(filepath.Join(src, record.MetaFile))
		os.WriteFile(filepath.Join(dir, record.MetaFile), b, 0o644)
		for _, a := range m.Agents {
			os.MkdirAll(filepath.Join(dir, a.ID), 0o755)
			b, _ := os.ReadFile(filepath.Join(src, a.ID, record.SummaryFile))
			os.WriteFile(filepath.Join(dir, a.ID, record.SummaryFile), b, 0o644)
		}
		return dir
	}
	sc := mr.Hierarchical()
	// The committed results pass every check of their counts and ids; an
	// amt run has no audit sample, so the regression test refuses them
	// only for that (the last check readBaseline makes).
	if _, _, err := readBaseline(copyBaseline(t), sc); err == nil || !strings.Contains(err.Error(), "has no audit sample") {
		t.Fatalf("the committed results as a baseline: %v, want only the missing audit sample", err)
	}
	t.Run("violations above follow-ups", func(t *testing.T) {
		dir := copyBaseline(t)
		p := filepath.Join(dir, m.Agents[0].ID, record.SummaryFile)
		b, _ := os.ReadFile(p)
		// The first run's violations, then its first arm's, grow 1e7-fold.
		os.WriteFile(p, []byte(strings.Replace(string(b), `"violations": `, `"violations": 9999999`, 2)), 0o644)
		_, _, err := readBaseline(dir, sc)
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("err = %v, want an error naming %s", err, p)
		}
	})
	t.Run("agent id ../../x", func(t *testing.T) {
		dir := copyBaseline(t)
		p := filepath.Join(dir, record.MetaFile)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.Replace(string(b), `"id": "`+m.Agents[0].ID+`"`, `"id": "../../x"`, 1)), 0o644)
		_, _, err := readBaseline(dir, sc)
		if err == nil || !strings.Contains(err.Error(), "agents[0].id") {
			t.Errorf("err = %v", err)
		}
	})
}
