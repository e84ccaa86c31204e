package bandit

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/mr"
)

// sealState returns a state file of the given payload with a valid
// checksum line: what a hand-made or buggy state looks like once its
// checksum is recomputed.
func sealState(payload []byte) []byte {
	var b bytes.Buffer
	b.WriteString(stateMagic)
	fmt.Fprintf(&b, stateLineFormat, StateVersion, len(payload), sha256.Sum256(payload))
	b.Write(payload)
	return b.Bytes()
}

// payloadOf returns the payload of a state file written by WriteTo.
func payloadOf(t testing.TB, file []byte) []byte {
	t.Helper()
	rest := file[len(stateMagic):]
	nl := bytes.IndexByte(rest, '\n')
	if nl < 0 {
		t.Fatal("no checksum line")
	}
	return rest[nl+1:]
}

// partState returns a zero value of the state type a part saves (nil for
// a part that saves nothing).
func partState(p stateful) any {
	switch p.(type) {
	case *Standardizer:
		return &standardizerState{}
	case *Cover:
		return &coverState{}
	case *csPolicy:
		return &csState{}
	case *linPolicy:
		return &linState{}
	case *ucb1:
		return &ucb1State{}
	case *hts:
		return &htsState{}
	}
	return nil
}

// poison sets the first element of the first non-empty float slice (or
// float field) of v, a pointer to a state struct, to x and reports
// whether it found one; with ints it sets the first signed integer field
// to -1 instead.
func poison(v reflect.Value, x float64, ints bool) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return poison(v.Elem(), x, ints)
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if poison(v.Field(i), x, ints) {
				return true
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return false // the generator state
		}
		for i := 0; i < v.Len(); i++ {
			if poison(v.Index(i), x, ints) {
				return true
			}
		}
	case reflect.Float32, reflect.Float64:
		if !ints {
			v.SetFloat(x)
			return true
		}
	case reflect.Int64:
		if ints {
			v.SetInt(-1)
			return true
		}
	}
	return false
}

// TestStateRejectsCorruptValues checks, for every agent and every part of
// its state, that a NaN, an infinity or a negative count in it (under a
// valid checksum) is refused by Load with an error naming the part, and
// that the same file unpoisoned loads.
func TestStateRejectsCorruptValues(t *testing.T) {
	const dim = 6
	spec := mr.Hierarchical()
	for _, name := range Agents() {
		t.Run(name, func(t *testing.T) {
			a, err := New(name, spec, Layout{Dim: dim}, nil, 3)
			if err != nil {
				t.Fatal(err)
			}
			runAgent(t, a, 60, dim, rand.New(rand.NewPCG(1, 2)))
			payload := payloadOf(t, stateBytes(t, a))
			if _, err := ReadAgent(bytes.NewReader(sealState(payload)), spec, Layout{Dim: dim}); err != nil {
				t.Fatalf("valid state: %v", err)
			}
			for i := range a.parts() {
				for _, bad := range []struct {
					x    float64
					ints bool
				}{{math.NaN(), false}, {math.Inf(1), false}, {0, true}} {
					// Rewrite the payload with part i's state poisoned.
					dec := gob.NewDecoder(bytes.NewReader(payload))
					var out bytes.Buffer
					enc := gob.NewEncoder(&out)
					var h stateHeader
					if err := dec.Decode(&h); err != nil {
						t.Fatal(err)
					}
					enc.Encode(h)
					poisoned := false
					for j, q := range a.parts() {
						st := partState(q)
						if st == nil {
							continue
						}
						if err := dec.Decode(st); err != nil {
							t.Fatal(err)
						}
						if j == i {
							poisoned = poison(reflect.ValueOf(st), bad.x, bad.ints)
						}
						if err := enc.Encode(st); err != nil {
							t.Fatal(err)
						}
					}
					if !poisoned {
						continue
					}
					_, err := ReadAgent(bytes.NewReader(sealState(out.Bytes())), spec, Layout{Dim: dim})
					if err == nil {
						t.Errorf("part %d (%s) with %v (ints %v) loaded without error", i, partName(a, i), bad.x, bad.ints)
						continue
					}
					if !strings.Contains(err.Error(), partName(a, i)) {
						t.Errorf("part %d: error %q does not name the part %q", i, err, partName(a, i))
					}
				}
			}
		})
	}
}

// TestStateIntegrity checks the checksum: one flipped byte anywhere after
// the checksum line, a truncation or trailing bytes are refused with an
// error naming the file; an older format says to start afresh.
func TestStateIntegrity(t *testing.T) {
	dir := t.TempDir()
	spec := mr.Hierarchical()
	a, err := New("cover", spec, Layout{Dim: 5}, Options{"hidden": "2"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	runAgent(t, a, 40, 5, rand.New(rand.NewPCG(1, 1)))
	good := stateBytes(t, a)
	off := len(good) - len(payloadOf(t, good))
	load := func(name string, data []byte) error {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(path, spec, Layout{Dim: 5})
		if err != nil && !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %q does not name the file", name, err)
		}
		return err
	}
	if err := load("good", good); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{off, off + 1, (off + len(good)) / 2, len(good) - 1} {
		bad := bytes.Clone(good)
		bad[i] ^= 0x10
		if err := load("flipped", bad); err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
			t.Errorf("byte %d flipped: err = %v", i, err)
		}
	}
	if err := load("trunc", good[:len(good)-3]); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Errorf("truncated: err = %v", err)
	}
	if err := load("trailing", append(bytes.Clone(good), 0)); err == nil || !strings.Contains(err.Error(), "after its") {
		t.Errorf("trailing byte: err = %v", err)
	}
	// A version-2 file: the gob header right after the magic.
	var v2 bytes.Buffer
	v2.WriteString(stateMagic)
	h := a.header()
	h.Version = 2
	gob.NewEncoder(&v2).Encode(h)
	if err := load("v2", v2.Bytes()); err == nil || !strings.Contains(err.Error(), "older than version 3") {
		t.Errorf("version 2 file: err = %v", err)
	}
	// A size over the budget is refused before anything is read.
	huge := []byte(stateMagic + fmt.Sprintf(stateLineFormat, StateVersion, int64(1)<<40, sha256.Sum256(nil)))
	var tl *limits.TooLargeError
	if err := load("huge", huge); !errors.As(err, &tl) {
		t.Errorf("payload of 1 TiB: err = %v, want a *limits.TooLargeError", err)
	}
	// Not a regular file: a folder (a FIFO is tested in cmd/amt).
	if _, err := Load(dir, spec, Layout{Dim: 5}); !errors.Is(err, limits.ErrNotRegular) {
		t.Errorf("folder: err = %v", err)
	}
}

// TestStateHeaderBounds checks that a header cannot make Load build an
// agent much larger than its file (1,024 bags × 1,024 hidden units from a
// small file) nor print its arm list whole, and that LoadOrNew compares
// the header's options with the configuration before building anything.
func TestStateHeaderBounds(t *testing.T) {
	spec := mr.Hierarchical()
	lay := Layout{Dim: 64}
	a, err := New("bootstrap-ts", spec, lay, Options{"hidden": "1"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	payload := payloadOf(t, stateBytes(t, a))
	dec := gob.NewDecoder(bytes.NewReader(payload))
	var h stateHeader
	if err := dec.Decode(&h); err != nil {
		t.Fatal(err)
	}
	rest := payload[len(payload)-dec2rest(t, payload):]
	rewrite := func(h stateHeader) []byte {
		var b bytes.Buffer
		gob.NewEncoder(&b).Encode(h)
		b.Write(rest)
		return sealState(b.Bytes())
	}
	big := h
	big.Options = strings.Replace(strings.Replace(h.Options, "bags=4", "bags=1024", 1), "hidden=1", "hidden=1024", 1)
	if big.Options == h.Options {
		t.Fatalf("options %q: no bags/hidden to rewrite", h.Options)
	}
	_, err = ReadAgent(bytes.NewReader(rewrite(big)), spec, lay)
	if err == nil || !strings.Contains(err.Error(), "saved numbers") {
		t.Errorf("1024 bags × 1024 hidden in a small file: err = %v", err)
	}
	path := filepath.Join(t.TempDir(), "big.state")
	os.WriteFile(path, rewrite(big), 0o644)
	_, _, err = LoadOrNew(path, "bootstrap-ts", spec, lay, Options{"hidden": "1"}, 1)
	if err == nil || !strings.Contains(err.Error(), "has options") {
		t.Errorf("LoadOrNew with other options in the header: err = %v", err)
	}
	many := h
	many.Arms = make([]int, 4<<20)
	_, err = ReadAgent(bytes.NewReader(rewrite(many)), spec, lay)
	if err == nil || len(err.Error()) > 300 {
		t.Errorf("4M arm counts: err has %d bytes, want a short error", len(fmt.Sprint(err)))
	}
}

// dec2rest returns the length of the payload after its gob header.
func dec2rest(t *testing.T, payload []byte) int {
	t.Helper()
	r := bytes.NewReader(payload)
	var h stateHeader
	if err := gob.NewDecoder(r).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return r.Len()
}

// FuzzState feeds ReadAgent arbitrary files, and arbitrary payloads under
// a valid checksum (what a hand-made state looks like): it must return an
// agent or an error, never panic or allocate far beyond the input.
func FuzzState(f *testing.F) {
	spec := mr.Hierarchical()
	lay := Layout{Dim: 4, Grey: 1}
	// Small agents: the fuzzer's mutations slow down on large inputs.
	for _, name := range []string{"cover", "bootstrap-ts", "linucb", "ucb1", "hts"} {
		opts := Options{"hidden": "1"}
		if name == "linucb" || name == "ucb1" || name == "hts" {
			opts = Options{"proj": "0"}
			if name == "ucb1" {
				opts = nil
			}
		}
		a, err := New(name, flatRotation(f), lay, opts, 1)
		if err != nil {
			f.Fatal(err)
		}
		runAgent(f, a, 20, 4, rand.New(rand.NewPCG(1, 1)))
		file := stateBytes(f, a)
		f.Add(file)
		f.Add(payloadOf(f, file))
	}
	f.Add([]byte(stateMagic + "version 3 size 99999999999 sha256 00\n"))
	spec = flatRotation(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<20 {
			return
		}
		for _, in := range [][]byte{data, sealState(data)} {
			a, err := ReadAgent(bytes.NewReader(in), spec, lay)
			if err == nil {
				// What loads must save again and load to the same bytes.
				out := stateBytes(t, a)
				b, err := ReadAgent(bytes.NewReader(out), spec, lay)
				if err != nil {
					t.Fatalf("a loaded state does not load after saving: %v", err)
				}
				if !bytes.Equal(stateBytes(t, b), out) {
					t.Fatal("save/load/save changes the state")
				}
			}
		}
	})
}

// TestBankWeightsBound checks that an agent whose regressor bank would
// exceed limits.BankWeights is an error naming the limit, not an
// allocation of gigabytes (1,024 bags × 1,024 hidden units).
func TestBankWeightsBound(t *testing.T) {
	_, err := New("bootstrap-ts", mr.Hierarchical(), Layout{Dim: 512}, Options{"bags": "1024", "hidden": "1024"}, 1)
	if err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Errorf("err = %v", err)
	}
}
