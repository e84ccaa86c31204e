package cuda

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/amt-dev/amt/nn/cuda/internal/ptxgen"
)

// TestPTXUpToDate recompiles the kernels with clang-14 and compares the
// result with the committed PTX. Without clang-14 it skips, or fails
// under CI=true (.ci/run installs it).
func TestPTXUpToDate(t *testing.T) {
	if _, err := exec.LookPath(ptxgen.Clang); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not installed, so the committed PTX cannot be checked against kernels/*.cu (apt-get install clang-14)", ptxgen.Clang)
		}
		t.Skipf("%s is not installed: the committed PTX is not checked against kernels/*.cu (apt-get install clang-14)", ptxgen.Clang)
	}
	srcs, err := ptxgen.Sources("kernels")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, src := range srcs {
		ptxName := ptxgen.PTXName(src)
		want[ptxName] = true
		got, err := ptxgen.Compile(ptxgen.Clang, src)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(ptxName)
		if err != nil {
			t.Errorf("%v: run go generate ./nn/cuda", err)
			continue
		}
		if !bytes.Equal(got, committed) {
			gl, cl := strings.Split(string(got), "\n"), strings.Split(string(committed), "\n")
			line := 0
			for line < min(len(gl), len(cl)) && gl[line] == cl[line] {
				line++
			}
			t.Errorf("%s does not match %s (first difference at line %d): run go generate ./nn/cuda", ptxName, src, line+1)
		}
	}
	ptxs, _ := filepath.Glob("kernels/*.ptx")
	for _, p := range ptxs {
		if !want[p] {
			t.Errorf("%s has no source", p)
		}
	}
}

// TestDefaultBuildWithoutPurego checks that only the gpu build links the
// driver loader: without the tag amt stays a static binary with no
// dynamic loading at all.
func TestDefaultBuildWithoutPurego(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	deps := func(tags string, pkgs ...string) string {
		args := append([]string{"list", "-deps", "-tags=" + tags}, pkgs...)
		cmd := exec.Command(goCmd, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}
	const purego = "github.com/ebitengine/purego\n"
	if d := deps("", "github.com/amt-dev/amt/..."); strings.Contains(d, purego) {
		t.Error("the default build depends on purego")
	}
	if d := deps("gpu", "github.com/amt-dev/amt/nn/cuda"); !strings.Contains(d, purego) {
		t.Error("the gpu build of nn/cuda does not depend on purego: this test checks nothing")
	}
}
