package bandit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/amt-dev/amt/internal/atomicfile"
	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/scenario"
)

// StateVersion is the version of the agent state file format written by
// Save. Files of another version are rejected by Load. Version 2: the
// header has the grey-box block's size, and a standardising agent's
// Standardizer state follows it. Version 3: a line after the magic gives
// the size and SHA-256 of the rest (the payload), so that a truncated,
// corrupted or edited file is refused instead of silently reused.
const StateVersion = 3

// stateMagic starts every state file.
const stateMagic = "amt-bandit-state\n"

// A state file is
//
//	amt-bandit-state
//	version 3 size N sha256 HEX
//	payload: N bytes of gob — the stateHeader, then each part's state
//
// The checksum line is text so that a file of an older version (whose
// gob header follows the magic directly) is told apart by its first bytes.
const stateLineFormat = "version %d size %d sha256 %x\n"

// stateLineMax bounds the checksum line read before anything else.
const stateLineMax = 128

// stateHeader describes a saved agent; Load checks it before reading any
// learned numbers.
type stateHeader struct {
	Version  int
	Agent    string
	Scenario string
	Arms     []int // K of the main bandit, then the grid size of each arm (0 = none)
	Dim      int
	Grey     int    // the grey-box block's size (Layout.Grey)
	Options  string // Config.Canonical
	Seed     uint64
}

func (a *Agent) header() stateHeader {
	return stateHeader{Version: StateVersion, Agent: a.name, Scenario: a.scen.Name, Arms: armCounts(a.scen),
		Dim: a.layout.Dim, Grey: a.layout.Grey, Options: a.cfg.Canonical(a.name), Seed: a.seed}
}

// armCounts returns K of the scenario's main bandit, then the grid size of
// each arm (0 = none): the shape a state's header records.
func armCounts(spec scenario.Scenario) []int {
	arms := []int{len(spec.Arms)}
	for _, arm := range spec.Arms {
		n := 0
		if arm.Hierarchical() {
			n = len(arm.Values)
		}
		arms = append(arms, n)
	}
	return arms
}

// stateful is a part of an agent whose learned state is saved.
type stateful interface {
	saveState(enc *gob.Encoder) error
	loadState(dec *gob.Decoder) error
}

// parts returns the agent's stateful parts in file order: the
// standardizer, then the joint learner or the main bandit and the
// parameter bandits.
func (a *Agent) parts() []stateful {
	var ps []stateful
	if a.pre != nil {
		ps = append(ps, a.pre)
	}
	if a.joint != nil {
		return append(ps, a.joint)
	}
	ps = append(ps, a.main)
	for _, s := range a.subs {
		if s != nil {
			ps = append(ps, s)
		}
	}
	return ps
}

// WriteTo writes the agent's state (checksum line, header and learned
// numbers) to w.
func (a *Agent) WriteTo(w io.Writer) (int64, error) {
	var payload bytes.Buffer
	enc := gob.NewEncoder(&payload)
	if err := enc.Encode(a.header()); err != nil {
		return 0, fmt.Errorf("encoding state header: %w", err)
	}
	for i, p := range a.parts() {
		if err := p.saveState(enc); err != nil {
			return 0, fmt.Errorf("encoding state of part %d: %w", i, err)
		}
	}
	if payload.Len() > limits.StateBytes {
		return 0, &limits.TooLargeError{What: "agent state", Size: int64(payload.Len()), Limit: limits.StateBytes, Unit: "bytes"}
	}
	var buf bytes.Buffer
	buf.WriteString(stateMagic)
	fmt.Fprintf(&buf, stateLineFormat, StateVersion, payload.Len(), sha256.Sum256(payload.Bytes()))
	buf.Write(payload.Bytes())
	return buf.WriteTo(w)
}

// Save writes the agent's state to path atomically (internal/atomicfile: a
// temporary file in the same directory, synced, then renamed), so an
// interrupted save leaves the previous state intact.
func (a *Agent) Save(path string) error {
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("saving bandit state: %w", err)
	}
	defer f.Cleanup()
	if _, err := a.WriteTo(f); err != nil {
		return fmt.Errorf("saving bandit state to %s: %w", path, err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("saving bandit state to %s: %w", path, err)
	}
	return nil
}

// ReadAgent reads an agent saved with WriteTo. spec must be the scenario it
// was saved with (its reward functions are not saved) and ctx its context
// layout. Before any learned number is used the file must pass, in order:
// the format version; the size (at most limits.StateBytes) and SHA-256 of
// the payload, so a truncated, flipped or edited file is refused; the
// header against spec and ctx; the agent's size against the payload's (an
// agent needs at least one byte of payload per saved number, so a header
// cannot make Load build an agent far larger than its file); then every
// part's numbers against its value ranges (see the check methods below).
// An error names the field and both values.
func ReadAgent(r io.Reader, spec scenario.Scenario, ctx Layout) (*Agent, error) {
	return readAgent(r, spec, ctx, nil)
}

// wantAgent is what LoadOrNew expects of a state: the agent and its
// canonical options, compared with the header before the agent is built.
type wantAgent struct {
	name, options string
}

func readAgent(r io.Reader, spec scenario.Scenario, ctx Layout, want *wantAgent) (*Agent, error) {
	payload, err := readStatePayload(r)
	if err != nil {
		return nil, err
	}
	dec := gob.NewDecoder(bytes.NewReader(payload))
	var h stateHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("reading state header: %w", err)
	}
	if h.Version != StateVersion {
		return nil, fmt.Errorf("state format version %d, this amt reads version %d", h.Version, StateVersion)
	}
	if h.Scenario != spec.Name {
		return nil, fmt.Errorf("state is for scenario %q, want %q", clip(h.Scenario), spec.Name)
	}
	if h.Dim != ctx.Dim {
		return nil, fmt.Errorf("state has context dimension %d, want %d", h.Dim, ctx.Dim)
	}
	if h.Grey != ctx.Grey {
		return nil, fmt.Errorf("state has a grey-box block of %d values, want %d", h.Grey, ctx.Grey)
	}
	if err := compareArms(h.Arms, spec); err != nil {
		return nil, err
	}
	if want != nil {
		if h.Agent != want.name {
			return nil, fmt.Errorf("state holds agent %q, want %q", clip(h.Agent), want.name)
		}
		if h.Options != want.options {
			return nil, fmt.Errorf("state has options %s, want %s", clip(h.Options), want.options)
		}
	}
	opts := Options{}
	if h.Options != "" {
		if opts, err = ParseOptions(h.Options); err != nil {
			return nil, fmt.Errorf("state options: %w", err)
		}
	}
	cfg, err := Resolve(h.Agent, opts)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if n := savedNumbers(h.Agent, cfg, spec, ctx); n > int64(len(payload)) {
		return nil, fmt.Errorf("state header describes an agent of at least %d saved numbers but the payload has only %d bytes", n, len(payload))
	}
	a, err := newAgent(h.Agent, spec, ctx, cfg, h.Seed)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	for i, p := range a.parts() {
		if err := p.loadState(dec); err != nil {
			return nil, fmt.Errorf("state of part %d (%s): %w", i, partName(a, i), err)
		}
	}
	return a, nil
}

// readStatePayload reads the magic and the checksum line, then the payload,
// whose size and SHA-256 it checks.
func readStatePayload(r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(stateMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != stateMagic {
		return nil, fmt.Errorf("not an amt bandit state file (missing %q header)", strings.TrimSpace(stateMagic))
	}
	line, err := br.Peek(stateLineMax)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, fmt.Errorf("reading state checksum line: %w", err)
	}
	nl := bytes.IndexByte(line, '\n')
	if !bytes.HasPrefix(line, []byte("version ")) || nl < 0 {
		return nil, fmt.Errorf("state format older than version %d (no checksum line); this amt reads version %d: delete the file to start afresh", 3, StateVersion)
	}
	var version int
	var size int64
	var sum []byte
	if _, err := fmt.Sscanf(string(line[:nl+1]), stateLineFormat, &version, &size, &sum); err != nil {
		return nil, fmt.Errorf("state checksum line %q: %w", line[:nl], err)
	}
	if version != StateVersion {
		return nil, fmt.Errorf("state format version %d, this amt reads version %d", version, StateVersion)
	}
	if len(sum) != sha256.Size {
		return nil, fmt.Errorf("state checksum has %d bytes, want %d", len(sum), sha256.Size)
	}
	if size < 0 || size > limits.StateBytes {
		return nil, &limits.TooLargeError{What: "state payload", Size: size, Limit: limits.StateBytes, Unit: "bytes"}
	}
	br.Discard(nl + 1)
	payload, err := io.ReadAll(io.LimitReader(br, size))
	if err != nil {
		return nil, fmt.Errorf("reading state: %w", err)
	}
	if int64(len(payload)) < size {
		return nil, fmt.Errorf("state is truncated: %d of %d payload bytes", len(payload), size)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return nil, fmt.Errorf("state has data after its %d payload bytes", size)
	}
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return nil, fmt.Errorf("state checksum mismatch (sha256 %x, the file says %x): the file is corrupt or was edited", got, sum)
	}
	return payload, nil
}

// compareArms checks a header's arm counts against the scenario's, naming
// the first difference (never the whole list: a hostile header may hold
// millions).
func compareArms(got []int, spec scenario.Scenario) error {
	want := armCounts(spec)
	if len(got) != len(want) {
		return fmt.Errorf("state has arm counts for %d arms, scenario %q has %d arms", len(got)-1, spec.Name, len(want)-1)
	}
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		if i == 0 {
			return fmt.Errorf("state has arm counts with %d main arms, scenario %q has %d", got[0], spec.Name, want[0])
		}
		return fmt.Errorf("state has arm counts with a grid of %d for arm %d, scenario %q has %d", got[i], i-1, spec.Name, want[i])
	}
	return nil
}

// clip shortens a string from a file for an error message.
func clip(s string) string {
	const n = 200
	if len(s) <= n {
		return s
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

// partName names part i of a's parts() for an error message.
func partName(a *Agent, i int) string {
	if a.pre != nil {
		if i == 0 {
			return "standardizer"
		}
		i--
	}
	if a.joint != nil {
		return a.name
	}
	if i == 0 {
		return "main bandit"
	}
	n := 0
	for arm, s := range a.subs {
		if s == nil {
			continue
		}
		if n++; n == i {
			return fmt.Sprintf("parameter bandit of arm %d", arm)
		}
	}
	return "?"
}

// savedNumbers returns a lower bound of the numbers the state of the named
// agent saves (the dominant ones: the regressor banks, hts's covariances),
// computed from its configuration without building it. A state's payload
// holds at least one byte per number, so a header whose agent would need
// more is refused before the agent is allocated.
func savedNumbers(name string, cfg Config, spec scenario.Scenario, ctx Layout) int64 {
	info, err := lookupAgent(name)
	if err != nil || ctx.Dim < 1 {
		return 0
	}
	d := int64(ctx.Dim)
	if (info.standardized || cfg.Standardize) && cfg.Proj > 0 && cfg.Proj+ctx.Grey < ctx.Dim {
		d = int64(cfg.Proj + ctx.Grey)
	}
	if info.joint != nil {
		return d * d // at least one model's covariance
	}
	var blocks int64
	switch name {
	case "cover", "cover-modern":
		blocks = int64(cfg.Policies) + 1
	case "epsilon-greedy", "softmax", "squarecb", "bootstrap-ts":
		blocks = 1
		if name == "bootstrap-ts" {
			blocks = int64(cfg.Bags)
		}
	default:
		return 0
	}
	var k int64
	for i, n := range armCounts(spec) {
		if i == 0 || n > 0 {
			k += int64(n)
		}
	}
	rows := blocks * k * int64(max(cfg.Hidden, 1))
	return 2 * rows * (d + 1) // U and GU
}

// Load reads an agent saved with Save (see ReadAgent for the checks). A
// path that is not a regular file is refused before it is opened (a FIFO
// would block the open).
func Load(path string, spec scenario.Scenario, ctx Layout) (*Agent, error) {
	return load(path, spec, ctx, nil)
}

func load(path string, spec scenario.Scenario, ctx Layout, want *wantAgent) (*Agent, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("loading bandit state: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("loading bandit state %s: %w", path, limits.ErrNotRegular)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading bandit state: %w", err)
	}
	defer f.Close()
	a, err := readAgent(f, spec, ctx, want)
	if err != nil {
		return nil, fmt.Errorf("loading bandit state %s: %w", path, err)
	}
	return a, nil
}

// LoadOrNew implements "load existing or initialise new bandit": if path
// exists it is loaded and must hold the same agent with the same effective
// options (compared with the file's header before the agent is built, so
// a header cannot make it build another, larger agent); otherwise a new
// agent is returned (not yet saved). loaded reports which happened.
func LoadOrNew(path, name string, spec scenario.Scenario, ctx Layout, opts Options, seed uint64) (a *Agent, loaded bool, err error) {
	cfg, err := Resolve(name, opts)
	if err != nil {
		return nil, false, err
	}
	a, err = load(path, spec, ctx, &wantAgent{name: name, options: cfg.Canonical(name)})
	if errors.Is(err, fs.ErrNotExist) {
		a, err = New(name, spec, ctx, opts, seed)
		return a, false, err
	}
	if err != nil {
		return nil, false, err
	}
	return a, true, nil
}

// LoadOrNew's and ReadAgent's errors wrap these checks; they are grouped
// here with the value-range checks of every part's state (the check
// methods below), so that what a state file may hold is stated in one
// place.

// Policy state.

func (u *Uniform) saveState(*gob.Encoder) error { return nil }
func (u *Uniform) loadState(*gob.Decoder) error { return nil }

type coverState struct {
	Counter int64
	GD      gdState
	Bank    bankState
}

func (c *Cover) saveState(enc *gob.Encoder) error {
	return enc.Encode(coverState{c.counter, c.gd, c.bank.state()})
}

func (c *Cover) loadState(dec *gob.Decoder) error {
	var s coverState
	if err := dec.Decode(&s); err != nil {
		return err
	}
	if err := s.check(c.gd.Eta); err != nil {
		return err
	}
	c.counter, c.gd = s.Counter, s.GD
	return c.bank.setState(s.Bank)
}

type csState struct {
	T    int64
	CLo  float64
	CHi  float64
	GD   gdState
	Bank bankState
	RNG  []byte
}

func (p *csPolicy) saveState(enc *gob.Encoder) error {
	rng, err := p.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	return enc.Encode(csState{p.t, p.cLo, p.cHi, p.gd, p.bank.state(), rng})
}

func (p *csPolicy) loadState(dec *gob.Decoder) error {
	var s csState
	if err := dec.Decode(&s); err != nil {
		return err
	}
	if err := s.check(p.gd.Eta); err != nil {
		return err
	}
	if err := p.pcg.UnmarshalBinary(s.RNG); err != nil {
		return err
	}
	p.t, p.cLo, p.cHi, p.gd = s.T, s.CLo, s.CHi, s.GD
	return p.bank.setState(s.Bank)
}

type linState struct {
	Ainv, B, Theta [][]float64
	RNG            []byte
	// Learn calls and the range of logged costs.
	N        int64
	CLo, CHi float64
}

func (l *linPolicy) saveState(enc *gob.Encoder) error {
	rng, err := l.pcg.MarshalBinary()
	if err != nil {
		return err
	}
	return enc.Encode(linState{l.ainv, l.bvec, l.theta, rng, l.nLearn, l.cLo, l.cHi})
}

func (l *linPolicy) loadState(dec *gob.Decoder) error {
	var s linState
	if err := dec.Decode(&s); err != nil {
		return err
	}
	if err := s.check(); err != nil {
		return err
	}
	n := l.dim + 1
	if len(s.Ainv) != l.k || len(s.B) != l.k || len(s.Theta) != l.k {
		return fmt.Errorf("linear state has %d arms, want %d", len(s.Ainv), l.k)
	}
	for a := 0; a < l.k; a++ {
		if len(s.Ainv[a]) == 0 {
			l.ainv[a], l.bvec[a], l.theta[a] = nil, nil, nil
			continue
		}
		if len(s.Ainv[a]) != n*n || len(s.B[a]) != n || len(s.Theta[a]) != n {
			return fmt.Errorf("linear state arm %d has wrong sizes for dimension %d", a, l.dim)
		}
		l.ainv[a], l.bvec[a], l.theta[a] = s.Ainv[a], s.B[a], s.Theta[a]
	}
	l.nLearn, l.cLo, l.cHi = s.N, s.CLo, s.CHi
	return l.pcg.UnmarshalBinary(s.RNG)
}

// Value ranges. Every part's state type has a check method here, called by
// its loadState after decoding and before anything is copied into the
// agent: a state that passes the checksum was written by amt, but a
// checksum only proves the bytes are the ones some amt wrote, not that
// they are sane (a bug, a hand-made file with a recomputed checksum), and
// a NaN weight or an infinite learning rate silently turns every later
// decision into the same arm. The ranges are the ones the learning code
// keeps: weights within ±1e20 and squared-gradient sums within [0, 3e38]
// (bank.go's numeric guards), counts non-negative, cost and label ranges
// finite with lo <= hi, the learning rate the configured one.

// stateCheck records the first rule a loaded state breaks.
type stateCheck struct{ err error }

func (c *stateCheck) failf(format string, args ...any) {
	if c.err == nil {
		c.err = fmt.Errorf(format, args...)
	}
}

// within checks lo <= v <= hi (so NaN fails).
func (c *stateCheck) within(name string, v, lo, hi float64) {
	if !(v >= lo && v <= hi) {
		c.failf("%s = %v, want a number in [%g, %g]", name, v, lo, hi)
	}
}

func (c *stateCheck) all(name string, vs []float64, lo, hi float64) {
	for i, v := range vs {
		if !(v >= lo && v <= hi) {
			c.failf("%s[%d] = %v, want a number in [%g, %g]", name, i, v, lo, hi)
			return
		}
	}
}

func (c *stateCheck) all32(name string, vs []float32, lo, hi float64) {
	for i, v := range vs {
		if f := float64(v); !(f >= lo && f <= hi) {
			c.failf("%s[%d] = %v, want a number in [%g, %g]", name, i, v, lo, hi)
			return
		}
	}
}

func (c *stateCheck) count(name string, n int64) {
	if n < 0 {
		c.failf("%s = %d, want a count >= 0", name, n)
	}
}

// costRange checks a range of logged costs or labels: finite, lo <= hi.
func (c *stateCheck) costRange(name string, lo, hi float64) {
	if !(lo <= hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		c.failf("%s range [%v, %v], want finite bounds with lo <= hi", name, lo, hi)
	}
}

const (
	maxWeight = 1e20 // bank.go: weights clamped to ±1e20
	maxAccum  = 3e38 // bank.go: squared-gradient sums capped at 3e38
	maxFloat  = math.MaxFloat64
)

// check: the learning rate must be the configuration's (eta), the
// normalisation accumulators finite and >= 0, the label range finite.
func (s gdState) check(c *stateCheck, eta float64) {
	if s.Eta != eta {
		c.failf("learning rate %v, the configuration's is %v", s.Eta, eta)
	}
	c.within("normalisation T", s.T, 0, maxFloat)
	c.within("normalisation S", s.S, 0, maxFloat)
	c.costRange("label", s.Lo, s.Hi)
}

// check: weights within ±1e20, accumulators and norms in [0, 3e38].
func (s bankState) check(c *stateCheck) {
	c.all32("weight U", s.U, -maxWeight, maxWeight)
	c.all32("weight V", s.V, -maxWeight, maxWeight)
	c.all32("bias VB", s.VB, -maxWeight, maxWeight)
	c.all32("gradient sum GU", s.GU, 0, maxAccum)
	c.all32("gradient sum GV", s.GV, 0, maxAccum)
	c.all32("norm NU", s.NU, 0, math.MaxFloat32)
	c.all32("norm NV", s.NV, 0, math.MaxFloat32)
}

func (s coverState) check(eta float64) error {
	var c stateCheck
	c.count("counter", s.Counter)
	s.GD.check(&c, eta)
	s.Bank.check(&c)
	return c.err
}

func (s csState) check(eta float64) error {
	var c stateCheck
	c.count("learn count", s.T)
	c.costRange("cost", s.CLo, s.CHi)
	s.GD.check(&c, eta)
	s.Bank.check(&c)
	return c.err
}

func (s linState) check() error {
	var c stateCheck
	c.count("learn count", s.N)
	c.costRange("cost", s.CLo, s.CHi)
	for a := range s.Ainv {
		c.all(fmt.Sprintf("arm %d inverse Gram matrix", a), s.Ainv[a], -maxFloat, maxFloat)
	}
	for a := range s.B {
		c.all(fmt.Sprintf("arm %d b", a), s.B[a], -maxFloat, maxFloat)
	}
	for a := range s.Theta {
		c.all(fmt.Sprintf("arm %d theta", a), s.Theta[a], -maxFloat, maxFloat)
	}
	return c.err
}

// check: counts >= 0 and adding up to the learn count; sums finite.
func (s ucb1State) check() error {
	var c stateCheck
	c.count("learn count", s.T)
	var n int64
	for a, v := range s.N {
		c.count(fmt.Sprintf("arm %d count", a), v)
		n += v
	}
	if c.err == nil && n != s.T {
		c.failf("arm counts add up to %d, the learn count is %d", n, s.T)
	}
	c.all("cost sum", s.Sum, -maxFloat, maxFloat)
	c.costRange("cost", s.CLo, s.CHi)
	return c.err
}

// check: the count a whole number >= 0, means finite, the sums of squares
// finite (rounding may leave one slightly negative, which reads as zero
// variance).
func (s standardizerState) check() error {
	var c stateCheck
	c.within("count", s.N, 0, 1<<53)
	if c.err == nil && s.N != math.Trunc(s.N) {
		c.failf("count %v, want a whole number", s.N)
	}
	c.all("mean", s.Mean, -maxFloat, maxFloat)
	c.all("sum of squares", s.M2, -maxFloat, maxFloat)
	c.all("projected mean", s.PMean, -maxFloat, maxFloat)
	c.all("projected sum of squares", s.PM2, -maxFloat, maxFloat)
	return c.err
}

// check: means and covariances finite, variances (the diagonals) >= 0.
func (s htsState) check() error {
	var c stateCheck
	for i := range s.Mu {
		c.all(fmt.Sprintf("model %d mean", i), s.Mu[i], -maxFloat, maxFloat)
	}
	for i, sg := range s.Sigma {
		c.all(fmt.Sprintf("model %d covariance", i), sg, -maxFloat, maxFloat)
		d := int(math.Sqrt(float64(len(sg))))
		for j := 0; j < d && d*d == len(sg); j++ {
			if sg[j*d+j] < 0 {
				c.failf("model %d variance %d = %v, want >= 0", i, j, sg[j*d+j])
				break
			}
		}
	}
	return c.err
}
