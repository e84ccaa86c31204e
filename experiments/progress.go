package experiments

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/amt-dev/amt/internal/plural"
)

// A Stage is one long step of an experiment, as progress reports name it:
// the sweep of an experiment counts images, some of them cached before it
// starts; an agent's runs count iterations.
type Stage struct {
	// Name names the step: "sweep rq1-classification", "cover (replay)".
	Name string
	// Unit is what is counted, in the singular: "image", "iteration".
	Unit string
	// Resumed, when set, names the work found done when the step starts
	// ("cached"): the first report's done count.
	Resumed string
}

// A ProgressFunc receives progress reports: done of total in a stage.
type ProgressFunc func(s Stage, done, total int)

// Progress shows the progress of long stages on w. On a terminal (and
// unless CI=true) it draws a one-line display (done/total, rate, ETA) that
// it rewrites in place with carriage returns. Anywhere else (a file, a
// pipe, CI logs, nohup) it writes plain lines: one when a stage starts
// ("sweep rq1: 1017 images, 412 cached, 605 to go"), then one every 10
// seconds or every 5 % of the work, whichever comes first (but at most one
// a second), and one when the stage ends.
//
// We keep this small type rather than a progress-bar library: the
// libraries we looked at (github.com/schollz/progressbar,
// github.com/vbauerster/mpb) draw bars for terminals, and what matters here
// is the plain-line mode for logs, which neither offers.
type Progress struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	now      func() time.Time

	stage    Stage
	started  bool
	start    time.Time // when the stage's first report came
	base     int       // done at the first report
	last     time.Time // when the last line (or redraw) was written
	lastDone int       // done at the last plain line
	drawn    bool      // a terminal line is open
}

// NewProgress returns a display on w: a redrawn line on a terminal, plain
// lines elsewhere.
func NewProgress(w io.Writer) *Progress {
	return &Progress{w: w, terminal: Interactive(w), now: time.Now}
}

// Interactive reports whether w is a terminal someone watches: a terminal,
// unless CI=true (a CI runner may give a job a terminal, but its output
// ends in a log, where a line rewritten in place is noise). Progress
// displays rewrite their line in place only then.
func Interactive(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("CI") != "true"
}

// sweepProgress returns progress bound to the stage of the sweep named
// "sweep "+name (counting images, resumed from the cache), as sweepSetup
// takes it; nil when progress is nil.
func sweepProgress(progress ProgressFunc, name string) func(done, total int) {
	if progress == nil {
		return nil
	}
	stage := Stage{Name: "sweep " + name, Unit: "image", Resumed: "cached"}
	return func(done, total int) { progress(stage, done, total) }
}

// Plain-line pacing: a line at least every plainEvery, and at every
// plainStep of the work if the last line is at least plainMinGap old.
const (
	plainEvery  = 10 * time.Second
	plainStep   = 0.05
	plainMinGap = time.Second
)

// Report reports done of total in a stage; it is safe for concurrent use.
// A new stage ends the previous one's line and restarts the rate and ETA.
// Its signature is a ProgressFunc.
func (p *Progress) Report(s Stage, done, total int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if !p.started || s != p.stage {
		p.endLine()
		p.stage, p.started, p.start, p.base, p.lastDone, p.last = s, true, now, done, done, now
		fmt.Fprintln(p.w, p.startLine(done, total))
		if done >= total {
			return
		}
	}
	if p.terminal {
		if done < total && now.Sub(p.last) < 100*time.Millisecond {
			return
		}
		p.last = now
		fmt.Fprintf(p.w, "\r%s   ", p.line(done, total, now))
		p.drawn = true
		if done >= total {
			p.endLine()
		}
		return
	}
	gap := now.Sub(p.last)
	step := total > 0 && float64(done-p.lastDone) >= plainStep*float64(total)
	if done < total && gap < plainEvery && !(step && gap >= plainMinGap) {
		return
	}
	if done == p.lastDone && done < total {
		return
	}
	p.last, p.lastDone = now, done
	fmt.Fprintln(p.w, p.line(done, total, now))
}

// Done ends the line if one was drawn (e.g. after an interruption).
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.endLine()
}

func (p *Progress) endLine() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// startLine announces a stage: its size and what is done already.
func (p *Progress) startLine(done, total int) string {
	s := p.stage.Name + ": " + plural.Count(total, p.stage.Unit)
	switch {
	case p.stage.Resumed != "":
		return s + fmt.Sprintf(", %d %s, %d to go", done, p.stage.Resumed, total-done)
	case done > 0:
		return s + fmt.Sprintf(", %d done, %d to go", done, total-done)
	}
	return s + " to go"
}

// line is a progress line: done/total, percentage, rate and ETA (or the
// time taken, at the end).
func (p *Progress) line(done, total int, now time.Time) string {
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	s := fmt.Sprintf("%s: %d/%s (%.1f%%)", p.stage.Name, done, plural.Count(total, p.stage.Unit), pct)
	el := now.Sub(p.start)
	if done >= total {
		return s + fmt.Sprintf(" in %s", el.Round(time.Second))
	}
	if n := done - p.base; n > 0 && el > 0 {
		rate := float64(n) / el.Seconds()
		eta := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		s += fmt.Sprintf(", %s/s, ETA %s", formatRate(rate), eta)
	}
	return s
}

// formatRate writes a rate with about three significant digits.
func formatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}
