package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runMainEnv makes the test binary run amt's main instead of the tests
// (see TestMain), for tests of the process: exit status, stderr, memory.
const runMainEnv = "AMT_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// process is the outcome of running amt in a child process.
type process struct {
	code    int
	stderr  string
	maxRSS  int64 // bytes; 0 where the platform does not report it
	elapsed time.Duration
}

// runAmt runs amt with args in a child process (this test binary, see
// TestMain), killing it after a minute.
func runAmt(t *testing.T, args ...string) process {
	t.Helper()
	return runAmtFor(t, time.Minute, args...)
}

// runAmtFor is runAmt killing the child after limit.
func runAmtFor(t *testing.T, limit time.Duration, args ...string) process {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(limit, func() { cmd.Process.Kill() })
	err = cmd.Wait()
	timer.Stop()
	p := process{code: cmd.ProcessState.ExitCode(), stderr: stderr.String(), elapsed: time.Since(start)}
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && runtime.GOOS == "linux" {
		p.maxRSS = ru.Maxrss << 10 // KiB on Linux
	}
	return p
}

// maxRSS is the peak memory allowed to amt rejecting a crafted model.
const maxRSS = 512 << 20

// checkRejected checks that p is the exit of amt rejecting a file: status
// 1, exactly one line on stderr starting with prefix and containing want,
// no panic or runtime trace, peak memory within maxRSS.
func checkRejected(t *testing.T, p process, prefix, want string) {
	t.Helper()
	msg := strings.TrimSuffix(p.stderr, "\n")
	switch {
	case p.code != 1:
		t.Errorf("exit status %d, want 1; stderr:\n%s", p.code, p.stderr)
	case strings.Contains(msg, "\n") || !strings.HasSuffix(p.stderr, "\n"):
		t.Errorf("stderr is not one line:\n%s", p.stderr)
	case !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, want):
		t.Errorf("stderr %q: want %q…%q", msg, prefix, want)
	}
	for _, bad := range []string{"panic:", "goroutine ", "fatal error", "runtime."} {
		if strings.Contains(p.stderr, bad) {
			t.Errorf("stderr holds %q:\n%s", bad, p.stderr)
		}
	}
	if p.maxRSS > maxRSS {
		t.Errorf("peak RSS %d MiB, want ≤ %d MiB", p.maxRSS>>20, maxRSS>>20)
	}
}

// craftedDir holds the crafted model files of issue #12 (nn's
// TestCraftedFiles writes them from nn/internal/onnxtest.Hostile), with
// index.json listing each with a substring of its load error.
var craftedDir = filepath.Join("..", "..", "nn", "testdata", "crafted")

type craftedFile struct{ Name, File, Want string }

func craftedFiles(t *testing.T) []craftedFile {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(craftedDir, "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var files []craftedFile
	if err := json.Unmarshal(b, &files); err != nil || len(files) == 0 {
		t.Fatalf("index.json: %d files, %v", len(files), err)
	}
	return files
}

// TestInferHostileModels runs amt infer, as a process, on every crafted
// model file of nn/testdata/crafted (issue #12): each must exit with status
// 1 and one line "amt: infer: invalid model FILE: reason", no panic or
// trace, within maxRSS. A valid tiny model beside them still runs.
func TestInferHostileModels(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "x.f32")
	if err := os.WriteFile(in, make([]byte, 4*3*4*4), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "y.f32")
	for _, c := range craftedFiles(t) {
		t.Run(c.Name, func(t *testing.T) {
			model := filepath.Join(craftedDir, c.File)
			p := runAmt(t, "infer", "-model", model, "-input", in, "-shape", "1,3,4,4", "-out", out)
			checkRejected(t, p, "amt: infer: invalid model "+model+": ", c.Want)
			t.Logf("exit %d, %.0f ms, peak RSS %d MiB: %s", p.code, p.elapsed.Seconds()*1000, p.maxRSS>>20, strings.TrimSpace(p.stderr))
		})
	}
	t.Run("valid", func(t *testing.T) {
		// A 1-node model (Relu over [N,3,4,4]) in protobuf wire format.
		model := filepath.Join(dir, "relu.onnx")
		if err := os.WriteFile(model, reluModel, 0o644); err != nil {
			t.Fatal(err)
		}
		p := runAmt(t, "infer", "-model", model, "-input", in, "-shape", "1,3,4,4", "-out", out)
		if p.code != 0 || p.stderr != "" {
			t.Fatalf("exit %d, stderr %q", p.code, p.stderr)
		}
		if b, err := os.ReadFile(out); err != nil || len(b) != 4*3*4*4 {
			t.Errorf("output: %d bytes, %v", len(b), err)
		}
	})
}

// TestConfigHostileModels gives crafted model files as sut.model and as
// features.model of an experiment config: amt sweep must report them as
// the config's "file:line:column: key: invalid model FILE: reason".
func TestConfigHostileModels(t *testing.T) {
	pick := map[string]bool{"ConstantOfShape of 1e12": true, "input [1,3,20000,20000]": true,
		"initializer declares 1e12 values, stores 1": true, "truncated file": true, "output [1,1e12]": true}
	for _, c := range craftedFiles(t) {
		if !pick[c.Name] {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			cfg, _ := smallConfig(t, "replay", 3, "")
			dir := filepath.Dir(cfg)
			model, err := filepath.Abs(filepath.Join(craftedDir, c.File))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(cfg)
			for _, k := range []struct{ old, new, key string }{
				{"models/cifar10_resnet20.onnx", model, "small.yaml:5:14: sut.model: "},
				{"features: {kind: phash}", "features: {kind: model, model: " + model + "}", "small.yaml:6:32: features.model: "},
			} {
				p := filepath.Join(dir, "bad.yaml")
				if err := os.WriteFile(p, []byte(strings.Replace(string(b), k.old, k.new, 1)), 0o644); err != nil {
					t.Fatal(err)
				}
				res := runAmt(t, "sweep", "-config", p)
				k.key = strings.Replace(k.key, "small.yaml", p, 1)
				checkRejected(t, res, "amt: "+k.key+"invalid model "+model+": ", c.Want)
			}
		})
	}
}

// reluModel is an ONNX model (IR 7, opset 13) of one Relu from input x
// [N,3,4,4] to output y.
var reluModel = []byte("\b\a\x12\bonnxtest:@\n\x0f\n\x01x\x12\x01y\x1a\x01r\"\x04Relu\x12\x04testZ\x1c\n\x01x\x12\x17\n\x15\b\x01\x12\x11\n\x03\x12\x01N\n\x02\b\x03\n\x02\b\x04\n\x02\b\x04b\t\n\x01y\x12\x04\n\x02\b\x01B\x04\n\x00\x10\r")
