package bandit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
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
