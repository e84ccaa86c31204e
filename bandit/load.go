package bandit

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/scenario"
)

// ReadAgent reads an agent saved with WriteTo. spec must be the scenario it
// was saved with (its reward functions are not saved) and ctx its context
// layout. Before any learned number is used the file must pass, in order:
// the format version; the size (at most limits.StateBytes) and SHA-256 of
// the payload, so a truncated, flipped or edited file is refused; the
// header against spec and ctx; the agent's size against the payload's (an
// agent needs at least one byte of payload per saved number, so a header
// cannot make Load build an agent far larger than its file); then every
// part's numbers against its value ranges (the check methods of
// statecheck.go). An error names the field and both values.
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
func clip(s string) string { return limits.Clip(s, 200) }

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
