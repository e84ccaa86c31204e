package experiments

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"
)

// A ProgressFunc receives progress reports: done of total in a named stage.
type ProgressFunc func(stage string, done, total int)

// Progress draws a one-line progress display (done/total, rate, ETA) that
// it rewrites in place with carriage returns. It draws only on a terminal:
// when w is not a terminal, or CI=true, it stays quiet.
type Progress struct {
	mu      sync.Mutex
	w       io.Writer
	label   string
	start   time.Time
	base    int // images already done when counting started
	last    time.Time
	enabled bool
	drawn   bool
}

// NewProgress returns a display on w labelled label (e.g. "sweep").
func NewProgress(w io.Writer, label string) *Progress {
	enabled := false
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) && os.Getenv("CI") != "true" {
		enabled = true
	}
	return &Progress{w: w, label: label, enabled: enabled, base: -1}
}

// forceEnable draws even when w is not a terminal (for tests).
func (p *Progress) forceEnable() { p.enabled = true }

// Report reports done of total in a named stage; it is safe for concurrent
// use and redraws at most ten times a second (and always at the end). A new
// stage ends the previous one's line and restarts the rate and ETA. Its
// signature is a ProgressFunc.
func (p *Progress) Report(stage string, done, total int) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if stage != p.label {
		if p.drawn {
			fmt.Fprintln(p.w)
			p.drawn = false
		}
		p.label, p.base, p.last = stage, -1, time.Time{}
	}
	if p.base < 0 {
		p.base, p.start = done, now
	}
	if done < total && now.Sub(p.last) < 100*time.Millisecond {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r%s", p.line(done, total, now))
	p.drawn = true
	if done >= total {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// Done ends the line if one was drawn (e.g. after an interruption).
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func (p *Progress) line(done, total int, now time.Time) string {
	pct := 100.0
	if total > 0 {
		pct = 100 * float64(done) / float64(total)
	}
	s := fmt.Sprintf("%s: %d/%d (%.1f%%)", p.label, done, total, pct)
	el := now.Sub(p.start).Seconds()
	if n := done - p.base; n > 0 && el > 0 {
		rate := float64(n) / el
		eta := time.Duration(float64(total-done) / rate * float64(time.Second)).Round(time.Second)
		s += fmt.Sprintf(" %.1f/s, ETA %s", rate, eta)
	}
	return s + "   "
}
