package experiments

import (
	"context"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amt-dev/amt/internal/sharedpath"
	"github.com/amt-dev/amt/scenario"
)

// The exhaustive table agrees with the reference pipeline (imgaug + Pillow +
// ONNX Runtime) on golden/verdicts wherever the golden's margins are clear.
func TestSweepMatchesGoldenVerdicts(t *testing.T) {
	golden := sharedpath.ForTest(t, "golden/verdicts")
	assets := sharedpath.ForTest(t, "assets")
	for _, tc := range []struct {
		model, file string
		size        int
		short, full int // images checked in -short mode and otherwise
	}{
		{"cifar10_resnet20.onnx", "resnet20_first100.csv", 32, 3, 100},
		{"cifar10_squeezenet1_1.onnx", "squeezenet_first100.csv", 224, 1, 100},
	} {
		t.Run(tc.model, func(t *testing.T) {
			n := tc.full
			if testing.Short() {
				n = tc.short
			}
			dir := t.TempDir()
			doc := fmt.Sprintf(`name: golden
case_study: classification
mode: replay
data: {format: cifar10, path: cifar10/test_batch_first1017.bin, limit: %d}
sut: {model: models/%s, input_size: %d}
features: {kind: none}
action_set: hierarchical
agents: [random]
seeds: 1
output: %s
cache: %s
`, n, tc.model, tc.size, filepath.Join(dir, "out"), filepath.Join(dir, "cache"))
			cfg, err := parseConfig([]byte(doc), filepath.Join(dir, "golden.yaml"), assets)
			if err != nil {
				t.Fatal(err)
			}
			exp, err := Prepare(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := exp.Sweep(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := tab.Verdicts(cfg.Scenario.Variants())
			if err != nil {
				t.Fatal(err)
			}
			type gold struct {
				orig, trans int
				clear       bool
			}
			want := map[string]gold{}
			f, err := os.Open(filepath.Join(golden, tc.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			recs, err := csv.NewReader(f).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			// image,mr,param,pred_original,pred_transformed,violation,margin_original,margin_transformed
			for _, r := range recs[1:] {
				o, _ := strconv.Atoi(r[3])
				tr, _ := strconv.Atoi(r[4])
				mo, _ := strconv.ParseFloat(r[6], 64)
				mt, _ := strconv.ParseFloat(r[7], 64)
				key := r[0] + "/" + scenario.Key(r[1], parseParam(t, r[2]))
				want[key] = gold{o, tr, mo > 1e-3 && mt > 1e-3}
			}
			checked, skipped := 0, 0
			for _, r := range rows {
				g, ok := want[strconv.Itoa(r.Image)+"/"+r.ParamKey()]
				if !ok {
					t.Fatalf("golden has no row for image %d, %s", r.Image, r.ParamKey())
				}
				if !g.clear {
					skipped++
					continue
				}
				checked++
				if r.PredOriginal != g.orig || r.PredTransformed != g.trans {
					t.Errorf("image %d, %s: predictions %d → %d, golden %d → %d", r.Image, r.ParamKey(), r.PredOriginal, r.PredTransformed, g.orig, g.trans)
				}
			}
			if checked < len(rows)*9/10 {
				t.Fatalf("only %d of %d rows have clear golden margins", checked, len(rows))
			}
			t.Logf("%d images: %d rows agree, %d near-ties skipped", n, checked, skipped)
		})
	}
}
