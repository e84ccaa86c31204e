package bandit

import (
	"bufio"
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/amt-dev/amt/internal/atomicfile"
	"github.com/amt-dev/amt/scenario"
)

// StateVersion is the version of the agent state file format written by
// Save. Files of another version are rejected by Load. Version 2: the
// header has the grey-box block's size, and a standardising agent's
// Standardizer state follows it.
const StateVersion = 2

// stateMagic starts every state file.
const stateMagic = "amt-bandit-state\n"

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
	arms := []int{len(a.scen.Arms)}
	for _, arm := range a.scen.Arms {
		n := 0
		if arm.Hierarchical() {
			n = len(arm.Values)
		}
		arms = append(arms, n)
	}
	return stateHeader{Version: StateVersion, Agent: a.name, Scenario: a.scen.Name, Arms: arms,
		Dim: a.layout.Dim, Grey: a.layout.Grey, Options: a.cfg.Canonical(a.name), Seed: a.seed}
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

// WriteTo writes the agent's state (header and learned numbers) to w.
func (a *Agent) WriteTo(w io.Writer) (int64, error) {
	var buf bytes.Buffer
	buf.WriteString(stateMagic)
	enc := gob.NewEncoder(&buf)
	if err := enc.Encode(a.header()); err != nil {
		return 0, fmt.Errorf("encoding state header: %w", err)
	}
	for i, p := range a.parts() {
		if err := p.saveState(enc); err != nil {
			return 0, fmt.Errorf("encoding state of part %d: %w", i, err)
		}
	}
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
// layout; a different format version, scenario, arm count or context
// layout is an error naming both values.
func ReadAgent(r io.Reader, spec scenario.Scenario, ctx Layout) (*Agent, error) {
	br := bufio.NewReader(r)
	magic := make([]byte, len(stateMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != stateMagic {
		return nil, fmt.Errorf("not an amt bandit state file (missing %q header)", strings.TrimSpace(stateMagic))
	}
	dec := gob.NewDecoder(br)
	var h stateHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("reading state header: %w", err)
	}
	if h.Version != StateVersion {
		return nil, fmt.Errorf("state format version %d, this amt reads version %d", h.Version, StateVersion)
	}
	if h.Scenario != spec.Name {
		return nil, fmt.Errorf("state is for scenario %q, want %q", h.Scenario, spec.Name)
	}
	if h.Dim != ctx.Dim {
		return nil, fmt.Errorf("state has context dimension %d, want %d", h.Dim, ctx.Dim)
	}
	if h.Grey != ctx.Grey {
		return nil, fmt.Errorf("state has a grey-box block of %d values, want %d", h.Grey, ctx.Grey)
	}
	opts := Options{}
	if h.Options != "" {
		var err error
		if opts, err = ParseOptions(h.Options); err != nil {
			return nil, fmt.Errorf("state options: %w", err)
		}
	}
	a, err := New(h.Agent, spec, ctx, opts, h.Seed)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	if want := a.header().Arms; !slices.Equal(h.Arms, want) {
		return nil, fmt.Errorf("state has arm counts %v (main, then per-arm grids), scenario %q has %v", h.Arms, spec.Name, want)
	}
	for i, p := range a.parts() {
		if err := p.loadState(dec); err != nil {
			return nil, fmt.Errorf("reading state of part %d: %w", i, err)
		}
	}
	return a, nil
}

// Load reads an agent saved with Save (see ReadAgent for the checks).
func Load(path string, spec scenario.Scenario, ctx Layout) (*Agent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("loading bandit state: %w", err)
	}
	defer f.Close()
	a, err := ReadAgent(f, spec, ctx)
	if err != nil {
		return nil, fmt.Errorf("loading bandit state %s: %w", path, err)
	}
	return a, nil
}

// LoadOrNew implements "load existing or initialise new bandit": if path
// exists it is loaded and must hold the same agent with the same effective
// options; otherwise a new agent is returned (not yet saved). loaded reports
// which happened.
func LoadOrNew(path, name string, spec scenario.Scenario, ctx Layout, opts Options, seed uint64) (a *Agent, loaded bool, err error) {
	a, err = Load(path, spec, ctx)
	if errors.Is(err, fs.ErrNotExist) {
		a, err = New(name, spec, ctx, opts, seed)
		return a, false, err
	}
	if err != nil {
		return nil, false, err
	}
	cfg, err := Resolve(name, opts)
	if err != nil {
		return nil, false, err
	}
	if a.name != name {
		return nil, false, fmt.Errorf("bandit state %s holds agent %q, want %q", path, a.name, name)
	}
	if got, want := a.cfg.Canonical(name), cfg.Canonical(name); got != want {
		return nil, false, fmt.Errorf("bandit state %s has options %s, want %s", path, got, want)
	}
	return a, true, nil
}

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
	if s.N < 0 || !(s.CLo <= s.CHi) {
		return fmt.Errorf("linear state has %d updates and cost range [%v, %v]", s.N, s.CLo, s.CHi)
	}
	l.nLearn, l.cLo, l.cHi = s.N, s.CLo, s.CHi
	return l.pcg.UnmarshalBinary(s.RNG)
}
