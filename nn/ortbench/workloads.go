package ortbench

import (
	_ "embed"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

//go:embed ortbench.mjs
var ortbenchJS string

// A Workload is one case of the side-by-side benchmark: a sub-benchmark
// name (model/bBATCH), the model file (in the shared assets/models, or,
// prefixed with "testdata:", in the repository's nn/testdata/models), the
// batch size and the shape of one input image.
type Workload struct {
	Name, Model string
	Batch       int
	CHW         []int
}

// ModelPath returns the path of w's model file given the shared assets
// folder and the repository's root folder.
func (w Workload) ModelPath(assets, repo string) string {
	if rest, ok := strings.CutPrefix(w.Model, "testdata:"); ok {
		return filepath.Join(repo, "nn", "testdata", "models", filepath.FromSlash(rest))
	}
	return filepath.Join(assets, "models", w.Model)
}

// jsWorkload matches one entry of ortbench.mjs's WORKLOADS table:
//
//	{ name: 'squeezenet/b1', model: 'x.onnx', chw: [3, 224, 224], batch: 1 },
var jsWorkload = regexp.MustCompile(`\{\s*name:\s*'([^']+)',\s*model:\s*'([^']+)',\s*chw:\s*\[([^\]]*)\],\s*batch:\s*(\d+)\s*\}`)

// Workloads returns the workloads of ortbench.mjs (the table both sides of
// compare.sh run), in its order.
func Workloads() ([]Workload, error) { return parseWorkloads(ortbenchJS) }

func parseWorkloads(src string) ([]Workload, error) {
	var ws []Workload
	for _, m := range jsWorkload.FindAllStringSubmatch(src, -1) {
		w := Workload{Name: m[1], Model: m[2]}
		var err error
		if w.Batch, err = strconv.Atoi(m[4]); err != nil {
			return nil, fmt.Errorf("ortbench.mjs: workload %s: batch %q: %v", w.Name, m[4], err)
		}
		for _, f := range strings.Split(m[3], ",") {
			d, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, fmt.Errorf("ortbench.mjs: workload %s: shape [%s]: %v", w.Name, m[3], err)
			}
			w.CHW = append(w.CHW, d)
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("ortbench.mjs: no workloads found (has the WORKLOADS table changed form?)")
	}
	return ws, nil
}
