package ortbench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
)

// workload is one benchmark case: a sub-benchmark name (model/bBATCH), the
// model file, the batch size and the per-image shape.
type workload struct {
	name, model, batch, shape string
}

// goWorkload matches one entry of BenchmarkModels' benchCases:
//
//	{"squeezenet/b1", "x.onnx", 1, []int{3, 224, 224}},
var goWorkload = regexp.MustCompile(`\{"([^"]+)",\s*"([^"]+)",\s*(\d+),\s*\[\]int\{([^}]*)\}\}`)

func normShape(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, ",", " ")), ",")
}

func ortWorkloads(t *testing.T) []workload {
	t.Helper()
	all, err := Workloads()
	if err != nil {
		t.Fatal(err)
	}
	var ws []workload
	for _, w := range all {
		shape := fmt.Sprint(w.CHW)
		ws = append(ws, workload{w.Name, w.Model, strconv.Itoa(w.Batch), normShape(shape[1 : len(shape)-1])})
	}
	return ws
}

// TestWorkloadsMatchGoBenchmarks checks that ortbench.mjs times exactly the
// cases of BenchmarkModels (../bench_test.go): same names, models, batch
// sizes and input shapes, in the same order. A mismatch would make
// compare.sh print n/a or compare different work.
func TestWorkloadsMatchGoBenchmarks(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "bench_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	var goWs []workload
	for _, m := range goWorkload.FindAllStringSubmatch(string(src), -1) {
		goWs = append(goWs, workload{m[1], m[2], m[3], normShape(m[4])})
	}
	if len(goWs) == 0 {
		t.Fatal("nn/bench_test.go: no benchCases entries found (has the table changed form?)")
	}
	if ortWs := ortWorkloads(t); !slices.Equal(ortWs, goWs) {
		t.Errorf("ortbench.mjs workloads differ from BenchmarkModels' cases:\n ortbench.mjs: %v\n bench_test.go: %v", ortWs, goWs)
	}
}

// TestWorkloadModelsExist checks that every model ortbench.mjs times is in
// the shared assets (or nn/testdata/models) and that the workload names have the model/bBATCH form
// compare.sh splits into its columns.
func TestWorkloadModelsExist(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	name := regexp.MustCompile(`^[a-z0-9]+/b(\d+)$`)
	for _, w := range ortWorkloads(t) {
		m := name.FindStringSubmatch(w.name)
		if m == nil || m[1] != w.batch {
			t.Errorf("workload %q: want the form model/bBATCH with BATCH = %s", w.name, w.batch)
		}
		file := filepath.Join(assets, "models", w.model)
		if rest, ok := strings.CutPrefix(w.model, "testdata:"); ok {
			file = filepath.Join("..", "testdata", "models", filepath.FromSlash(rest))
		}
		if _, err := os.Stat(file); err != nil {
			t.Errorf("workload %q: %v", w.name, err)
		}
	}
}

// TestModelPath checks that Workloads' model paths, as hostinfo resolves
// them, are files: the shared assets' models and nn/testdata/models.
func TestModelPath(t *testing.T) {
	assets := sharedpath.ForTest(t, "assets")
	ws, err := Workloads()
	if err != nil {
		t.Fatal(err)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testdata := 0
	for _, w := range ws {
		p := w.ModelPath(assets, repo)
		if strings.HasPrefix(w.Model, "testdata:") {
			testdata++
			if !strings.HasPrefix(p, filepath.Join(repo, "nn", "testdata", "models")+string(filepath.Separator)) {
				t.Errorf("workload %q: path %s is not in nn/testdata/models", w.Name, p)
			}
		}
		if _, err := os.Stat(p); err != nil {
			t.Errorf("workload %q: %v", w.Name, err)
		}
	}
	if testdata == 0 {
		t.Error("no testdata: workload (the ViT and ConvNeXt are expected)")
	}
}

// TestTable checks compare.sh's table on saved benchmark outputs: ms/img is
// taken from the right column, repeated lines (-count) give their median
// (numerically sorted; odd and even counts), the GOMAXPROCS suffix of Go's
// names is dropped, each kernel set gets its columns and amt/ORT, failed
// or missing benchmarks show n/a, Go-only workloads come last, empty
// outputs leave their columns n/a, GFLOP/s and % of peak are derived
// from hostinfo's flops per image and peak (n/a without them), and the
// lines after the table pair each side's k-th measurement of a workload
// (round k) into amt/ORT, counting the rounds where amt was as fast.
func TestTable(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not available")
	}
	empty := filepath.Join(t.TempDir(), "empty.txt")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		golden string
	}{
		{[]string{"testdata/ort.txt", "testdata/host.txt", "avx512=testdata/go.txt", "avx2=testdata/go2.txt"}, "testdata/table.golden"},
		{[]string{"testdata/ort.txt", empty, "avx2=" + empty}, "testdata/table_nohost.golden"},
	} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("bash", append([]string{"compare.sh", "-table"}, tc.args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("compare.sh -table %v: %v\n%s", tc.args, err, stderr.String())
		}
		want, err := os.ReadFile(tc.golden)
		if err != nil {
			t.Fatal(err)
		}
		if got := stdout.String(); got != string(want) {
			t.Errorf("compare.sh -table %v:\n%s\nwant (%s):\n%s", tc.args, got, tc.golden, want)
		}
	}
	// Wrong usage is an error naming the usage, not a table.
	for _, args := range [][]string{{"testdata/ort.txt", "testdata/host.txt"}, {"testdata/ort.txt", "testdata/host.txt", "testdata/go.txt"}} {
		out, err := exec.Command("bash", append([]string{"compare.sh", "-table"}, args...)...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "compare.sh") {
			t.Errorf("compare.sh -table %v: err %v, output %q; want a usage error", args, err, out)
		}
	}
}
