package nn

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/sharedpath"
	ot "github.com/amt-dev/amt/nn/internal/onnxtest"
)

// fuzzLimits are the limits FuzzLoad loads under: small, so that an
// execution stays fast, yet above what the seed models need.
var fuzzLimits = LoadOptions{MaxBytes: 256 << 20, MaxElements: 1 << 22}

// FuzzLoad loads arbitrary bytes as a model file and, when that succeeds
// and its inputs are small, runs it once on zeros (batch 1, and batch 2
// where the batch is dynamic). Loading must fail with a one-line
// *ModelError that is not an internal error, or succeed; running must not
// panic nor fail with an internal error. Seeds: the crafted files of
// onnxtest.Hostile, the single-operator test models, the small
// architectures, and the shipped models of up to 4 MiB when the shared
// assets are present; crashers found are kept in testdata/fuzz/FuzzLoad.
//
//	go test ./nn -run '^$' -fuzz FuzzLoad -fuzztime 10m
func FuzzLoad(f *testing.F) {
	for _, c := range ot.Hostile() {
		if len(c.File) <= 1<<16 {
			f.Add(c.File)
		}
	}
	var files []string
	for _, pat := range []string{"testdata/models/op/*.onnx", "testdata/models/arch/densenet*.onnx"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	if dir, err := sharedpath.Find("assets/models"); err == nil {
		m, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		files = append(files, m...)
	}
	for _, p := range files {
		if st, err := os.Stat(p); err != nil || st.Size() > 4<<20 {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := LoadBytesWith(b, "fuzz.onnx", fuzzLimits)
		if err != nil {
			var me *ModelError
			msg := err.Error()
			if !errors.As(err, &me) || !strings.HasPrefix(msg, "invalid model fuzz.onnx: ") ||
				strings.ContainsAny(msg, "\r\n") || strings.Contains(msg, "internal error") {
				t.Fatalf("load error %q (%T): want a one-line *ModelError, not an internal error", msg, err)
			}
			return
		}
		for _, batch := range []int{1, 2} {
			ins := fuzzInputs(m, batch)
			if ins == nil {
				return
			}
			if _, err := m.Run(ins...); err != nil && strings.Contains(err.Error(), "internal error") {
				t.Fatalf("run (batch %d): %v", batch, err)
			}
		}
	})
}

// fuzzInputs returns zero inputs of a batch of n images for m, or nil when
// they would be large or the batch is fixed and other than n.
func fuzzInputs(m *Model, n int) []*tensor.Dense {
	var ins []*tensor.Dense
	total := 0
	for _, in := range m.Inputs() {
		s := append([]int(nil), in.Shape...)
		if s[0] < 0 {
			s[0] = n
		} else if n != 1 {
			return nil
		}
		k, ok := checkedNumel(s, 1<<16)
		if total += int(k); !ok || total > 1<<16 {
			return nil
		}
		ins = append(ins, tensor.New(tensor.WithShape(s...), tensor.WithBacking(make([]float32, k))))
	}
	return ins
}
