package experiments

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// fakeClock is a clock that the test moves.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time          { return c.t }
func (c *fakeClock) advance(d time.Duration) { c.t = c.t.Add(d) }

func newTestProgress(terminal bool) (*Progress, *bytes.Buffer, *fakeClock) {
	var buf bytes.Buffer
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	p := NewProgress(&buf)
	p.terminal, p.now = terminal, clock.now
	return p, &buf, clock
}

var (
	sweepStage = Stage{Name: "sweep rq1", Unit: "image", Resumed: "cached"}
	agentStage = Stage{Name: "agent cover", Unit: "iteration"}
)

// TestProgressPlain: off a terminal, a stage writes a start line, then a
// line every 10 s or 5 %, and an end line.
func TestProgressPlain(t *testing.T) {
	p, buf, clock := newTestProgress(false)
	p.Report(sweepStage, 412, 1017)
	for done := 413; done <= 1017; done++ {
		clock.advance(500 * time.Millisecond) // 2 images a second
		p.Report(sweepStage, done, 1017)
	}
	p.Report(agentStage, 0, 20000)
	for done := 1; done <= 20000; done++ {
		clock.advance(time.Millisecond)
		p.Report(agentStage, done, 20000)
	}
	p.Done()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		"sweep rq1: 1017 images, 412 cached, 605 to go",
		"sweep rq1: 432/1017 images (42.5%), 2.00/s, ETA 4m53s",
	}
	for i, w := range want {
		if i >= len(lines) || lines[i] != w {
			t.Fatalf("line %d: got %q, want %q\n%s", i, lines[min(i, len(lines)-1)], w, buf.String())
		}
	}
	count := func(prefix string) int {
		n := 0
		for _, l := range lines {
			if strings.HasPrefix(l, prefix) {
				n++
			}
		}
		return n
	}
	// 605 images in 302.5 s: a line every 10 s (5 % is 25 s here).
	if n := count("sweep rq1: "); n < 30 || n > 33 {
		t.Errorf("%d sweep lines, want about 32:\n%s", n, buf.String())
	}
	if !strings.Contains(buf.String(), "sweep rq1: 1017/1017 images (100.0%) in 5m3s\nagent cover: 20000 iterations to go\n") {
		t.Errorf("no end line before the next stage:\n%s", buf.String())
	}
	// 20000 iterations in 20 s: a line at each 5 % step that is ≥ 1 s after
	// the one before, i.e. every second, and the end line.
	if n := count("agent cover: "); n != 1+20 {
		t.Errorf("%d agent lines, want 21:\n%s", n, buf.String())
	}
	if !strings.HasSuffix(buf.String(), "agent cover: 20000/20000 iterations (100.0%) in 20s\n") {
		t.Errorf("no end line:\n%s", buf.String())
	}
	// A fully cached sweep says so in one line.
	p, buf, _ = newTestProgress(false)
	p.Report(sweepStage, 1017, 1017)
	p.Done()
	if got := buf.String(); got != "sweep rq1: 1017 images, 1017 cached, 0 to go\n" {
		t.Errorf("cached sweep: %q", got)
	}
}

// TestProgressTerminal: on a terminal, the start line, then one line
// redrawn in place at most ten times a second, ended at the end.
func TestProgressTerminal(t *testing.T) {
	p, buf, clock := newTestProgress(true)
	p.Report(sweepStage, 1, 4)
	clock.advance(time.Second)
	p.Report(sweepStage, 2, 4)
	p.Report(sweepStage, 3, 4) // too soon: not drawn
	clock.advance(time.Second)
	p.Report(sweepStage, 4, 4)
	p.Report(agentStage, 0, 10)
	clock.advance(time.Second)
	p.Report(agentStage, 1, 10)
	p.Done()
	want := "sweep rq1: 4 images, 1 cached, 3 to go\n" +
		"\rsweep rq1: 2/4 images (50.0%), 1.00/s, ETA 2s   " +
		"\rsweep rq1: 4/4 images (100.0%) in 2s   \n" +
		"agent cover: 10 iterations to go\n" +
		"\ragent cover: 1/10 iterations (10.0%), 1.00/s, ETA 9s   \n"
	if got := buf.String(); got != want {
		t.Errorf("got\n%q\nwant\n%q", got, want)
	}
}
