package experiments

import (
	"bytes"
	"strings"
	"testing"
)

func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	p := NewProgress(&buf, "sweep")
	p.Report("sweep", 1, 4)
	if buf.Len() != 0 {
		t.Fatalf("drew on a non-terminal: %q", buf.String())
	}
	p.forceEnable()
	p.Report("sweep", 1, 4)
	p.Report("sweep", 4, 4)
	p.Report("cover", 1, 10)
	p.Done()
	out := buf.String()
	for _, want := range []string{"\rsweep: 1/4 (25.0%)", "\rsweep: 4/4 (100.0%) ", "/s, ETA 0s", "\rcover: 1/10 (10.0%)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output %q lacks %q", out, want)
		}
	}
	if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 2 {
		t.Errorf("lines not ended: %q", out)
	}
}
