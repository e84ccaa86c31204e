// Package limits holds the size budget of every input amt reads: the
// largest file, line, field or count each reader accepts, checked before
// the reader allocates for it. An input over its budget is an error that
// names the file, the limit and the size found (a *TooLargeError), never
// an attempt to allocate: a hostile or corrupt input must end in a clear
// one-line error, not an out-of-memory kill.
//
// The budgets are far above what valid runs produce (the largest committed
// result file is under 1 MB, the largest agent state a few MB) and small
// enough that the memory a reader needs for an input at its budget stays
// well under 512 MB. They are constants, documented in README.md ("Input
// limits"); a new reader adds its budget here.
package limits

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

const (
	// StateBytes is the largest agent state file (bandit.Load): its
	// learned numbers are read whole before the checksum is checked.
	StateBytes = 128 << 20
	// JSONBytes is the largest JSON document read whole: a run's run.json
	// and summary.json, a baseline's summary.json, timing.json,
	// config-adjacent metadata.
	JSONBytes = 32 << 20
	// LineBytes is the longest line of a JSON-lines log (seed logs,
	// decision logs for amt ope) and of a verdict CSV.
	LineBytes = 4 << 20
	// FieldBytes is the longest field of a verdict CSV.
	FieldBytes = 64 << 10
	// LogBytes is the largest JSON-lines log read whole (amt ope's
	// decision logs, a run's seed logs): their decoded records take a few
	// times their text.
	LogBytes = 64 << 20
	// TableBytes is the largest verdict table (a CSV; the paper's
	// 10,000-image sweep is 1.4 MB): a row of 10 bytes decodes to about
	// 100, so a table at the limit takes under 200 MB.
	TableBytes = 16 << 20
	// Arms is the largest number of arms of a bandit built from an input
	// (amt ope's -arms or a log's largest arm index): far above the 59
	// relations of the paper's scenario.
	Arms = 1 << 16
	// ContextDim is the largest context vector an input may carry (amt
	// ope's logs): the widest feature layout amt computes is under 10,000
	// values.
	ContextDim = 1 << 16
	// Hidden is the largest hidden layer of a cost model built from a flag
	// (amt ope -model-hidden), as the agents' hidden option.
	Hidden = 1024
	// BankWeights is the most weights of one regressor bank (the cost
	// models of cover, epsilon-greedy, softmax, squarecb, bootstrap-ts
	// and amt ope's DR model): blocks × arms × hidden units × (context
	// dimension + 1). The paper's cover has about 2 million; at the limit a
	// bank and its gradient sums take 256 MB.
	BankWeights = 1 << 25
	// OPECells is the most records × arms amt ope evaluates: it keeps the
	// evaluated policy's distribution and the cost model's prediction per
	// arm for every record.
	OPECells = 1 << 24
	// Counts is the largest count (iterations, follow-ups, violations) a
	// loaded summary, log or baseline may hold: 2^40, a trillion
	// follow-ups, so that the sums over all the runs a summary can list
	// stay exact in int64 and nearly so in float64.
	Counts = 1 << 40
)

// TooLargeError reports an input over its budget.
type TooLargeError struct {
	What  string // "state file x.state", "line 3 of log.jsonl"
	Size  int64  // the size found, or -1 when only "more than Limit" is known
	Limit int64
	Unit  string // "bytes", "arms", …
}

func (e *TooLargeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s is larger than the limit of %d %s", e.What, e.Limit, e.Unit)
	}
	return fmt.Sprintf("%s has %d %s, more than the limit of %d", e.What, e.Size, e.Unit, e.Limit)
}

// Clip shortens a value read from an input to its first n bytes for a
// one-line error message, saying how long it was; a value of at most n
// bytes is returned as it is.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

// ReadFile reads the regular file at path whole, refusing one larger than
// limit bytes (a *TooLargeError) before reading it, and refusing what is
// not a regular file (a FIFO would block the open, a device never ends):
// the one way amt reads a whole file it did not just write.
func ReadFile(path string, limit int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrNotRegular}
	}
	if fi.Size() > limit {
		return nil, &TooLargeError{What: path, Size: fi.Size(), Limit: limit, Unit: "bytes"}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown since the Stat: read at most one byte more
	// than the limit to tell.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, &TooLargeError{What: path, Size: -1, Limit: limit, Unit: "bytes"}
	}
	return data, nil
}

// Open opens the regular file at path for reading, refusing what is not
// a regular file before opening it (a FIFO would block the open, a device
// never end): amt's readers of named inputs go through it or ReadFile.
func Open(path string) (*os.File, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	return os.Open(path)
}

// ErrNotRegular is the error of a read of something that is not a regular
// file (a folder, a FIFO, a device, a socket).
var ErrNotRegular = errors.New("not a regular file")

// LineReader returns a reader of r that fails with a *TooLargeError once
// more than total bytes in all, or a line of more than line bytes, have
// been read: for line-oriented parsers (encoding/csv, bufio.Scanner)
// whose own buffers would otherwise grow with the input. what names the
// input in the error.
//
// A bufio.Scanner hands the bytes read before an error to its split
// function as a last, unterminated line: a caller that parses that line
// should report Err, when not nil, instead of the parse error.
func LineReader(r io.Reader, what string, total, line int64) *LineLimitReader {
	return &LineLimitReader{r: r, what: what, total: total, line: line, lineNo: 1}
}

// LineLimitReader is the reader of LineReader.
type LineLimitReader struct {
	r                 io.Reader
	what              string
	total, line       int64
	read, cur, lineNo int64
	err               error
}

// Err returns the *TooLargeError once a budget is exceeded, else nil.
func (l *LineLimitReader) Err() error { return l.err }

func (l *LineLimitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	for _, b := range p[:n] {
		if b == '\n' {
			l.cur = 0
			l.lineNo++
			continue
		}
		if l.cur++; l.cur > l.line {
			l.err = &TooLargeError{What: fmt.Sprintf("line %d of %s", l.lineNo, l.what), Size: -1, Limit: l.line, Unit: "bytes"}
			return 0, l.err
		}
	}
	if l.read += int64(n); l.read > l.total {
		l.err = &TooLargeError{What: l.what, Size: -1, Limit: l.total, Unit: "bytes"}
		return 0, l.err
	}
	return n, err
}
