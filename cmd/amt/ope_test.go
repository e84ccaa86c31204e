package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// runOPE runs "amt ope args..." and returns stdout and the error.
func runOPE(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := dispatch(context.Background(), &cliEnv{stdout: &out, stderr: &errb}, append([]string{"ope"}, args...))
	return out.String(), err
}

// writeOPELog writes n uniformly logged decisions over 3 arms where arm
// (x0 > 0 ? 0 : 1) costs 0.1 and the others 0.9 in expectation.
func writeOPELog(t *testing.T, n int) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 4))
	var b strings.Builder
	for i := 0; i < n; i++ {
		x := []float32{float32(rng.Float64()*2 - 1), float32(rng.Float64()*2 - 1)}
		a := rng.IntN(3)
		best := 1
		if x[0] > 0 {
			best = 0
		}
		p := 0.9
		if a == best {
			p = 0.1
		}
		c := 0
		if rng.Float64() < p {
			c = 1
		}
		fmt.Fprintf(&b, `{"context":[%v,%v],"arm":%d,"prob":0.3333333333333333,"cost":%d}`+"\n", x[0], x[1], a, c)
	}
	path := filepath.Join(t.TempDir(), "log.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestOPECommand(t *testing.T) {
	path := writeOPELog(t, 3000)
	out, err := runOPE(t, "-log", path, "-agents", "uniform,linucb,greedy", "-agent-opts", "hidden=0,alpha=0.5")
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out)
	vals := map[string]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 7 && f[1] == "dr" {
			v, err := strconv.ParseFloat(f[2], 64)
			if err != nil {
				t.Fatal(err)
			}
			vals[f[0]] = v
		}
	}
	// Uniform's true value is (0.1 + 0.9 + 0.9)/3 ≈ 0.633; learners must do
	// clearly better over the log.
	if u := vals["uniform"]; u < 0.58 || u > 0.69 {
		t.Errorf("uniform DR value %v, want ≈ 0.633", u)
	}
	for _, a := range []string{"linucb", "greedy"} {
		if v, ok := vals[a]; !ok || v > 0.45 {
			t.Errorf("%s DR value %v (listed %v), want < 0.45", a, v, ok)
		}
	}
	if !strings.Contains(out, "logged") || !strings.Contains(out, "3000 records, 3 arms, context dimension 2") {
		t.Errorf("output lacks the header or the logged row:\n%s", out)
	}
	// Deterministic: the same command prints the same bytes.
	again, err := runOPE(t, "-log", path, "-agents", "uniform,linucb,greedy", "-agent-opts", "hidden=0,alpha=0.5")
	if err != nil || again != out {
		t.Errorf("second run differs (err %v)", err)
	}
	js, err := runOPE(t, "-log", path, "-agents", "uniform", "-json", "-arms", "4")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Arms    int `json:"arms"`
		Results []struct {
			Agent     string `json:"agent"`
			Estimates []struct {
				Estimator string   `json:"estimator"`
				Value     *float64 `json:"value"`
			} `json:"estimates"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatalf("-json output: %v\n%s", err, js)
	}
	if doc.Arms != 4 || len(doc.Results) != 2 || doc.Results[1].Agent != "uniform" || len(doc.Results[1].Estimates) != 3 {
		t.Errorf("-json output %+v", doc)
	}
}

func TestOPECommandErrors(t *testing.T) {
	path := writeOPELog(t, 10)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	os.WriteFile(bad, []byte(`{"context":[1],"arm":0,"prob":1,"cost":0}`+"\n"+`{"context":[1],"arm":0,"prob":-1,"cost":0}`+"\n"), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{nil, "-log is required"},
		{[]string{"-log", filepath.Join(t.TempDir(), "missing")}, "no such file"},
		{[]string{"-log", bad}, "line 2: prob -1"},
		{[]string{"-log", path, "-agents", "nope"}, `unknown agent "nope"`},
		{[]string{"-log", path, "-agent-opts", "zzz=1"}, `no listed agent has option "zzz"`},
		{[]string{"-log", path, "-agents", "cover", "-agent-opts", "psi=x"}, "psi"},
		{[]string{"-log", path, "-arms", "2"}, "logs arm 2 but -arms is 2"},
		{[]string{"-log", path, "-level", "1"}, "-level"},
		{[]string{"-log", path, "extra"}, "unexpected arguments"},
	}
	for _, c := range cases {
		_, err := runOPE(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("amt ope %q: err = %v, want %q", c.args, err, c.want)
		}
	}
}
