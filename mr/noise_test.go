package mr

import (
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/amt-dev/amt/internal/goldentest"
	"github.com/amt-dev/amt/rgb"
)

// noiseLevels is an image of w×h values cycling through levels.
func noiseLevels(w, h int, levels []int) rgb.Image {
	img := rgb.New(w, h)
	for i := range img.Pix {
		img.Pix[i] = uint8(levels[i%len(levels)])
	}
	return img
}

// TestNoiseDistributions compares the noise corruptions' output
// distribution, per input level, with the reference's (noise_stats.csv:
// 40000 draws of numpy's generator through the reference's formulas, see
// make_goldens.py): about 4700 draws per level here (a 32×32 image for the
// CIFAR-10-C constants, 64×64 for ImageNet-C's, under seeds 1…K). The
// mean and the variance of the output level must agree within 5.5
// standard errors of their difference (for the mean √(σ²/n + σ'²/n'), for
// the variance √((μ4 − σ⁴)/n + (μ4' − σ'⁴)/n')): over the 2 × 2080
// comparisons a false alarm has probability below 2·10⁻⁴, while a wrong
// constant (gaussian 0.08 for 0.09, say) moves the variance by dozens of
// standard errors. Where both variances are 0 the means must be equal.
func TestNoiseDistributions(t *testing.T) {
	rows := goldentest.ReadCSV(t, filepath.Join(corruptionDir, "noise_stats.csv")).Maps()
	type key struct {
		noise, regime string
		sev           int
	}
	groups := map[key][]map[string]string{}
	var order []key
	for _, r := range rows {
		s, _ := strconv.Atoi(r["severity"])
		k := key{r["noise"], r["regime"], s}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(order) != 4*2*5 {
		t.Fatalf("noise_stats.csv has %d groups, want 40", len(order))
	}
	num := func(r map[string]string, f string) float64 {
		v, err := strconv.ParseFloat(r[f], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	worst := 0.0
	for _, k := range order {
		g := groups[k]
		levels := make([]int, len(g))
		index := map[int]int{}
		for i, r := range g {
			levels[i] = int(num(r, "level"))
			index[levels[i]] = i
		}
		src, draws := noiseLevels(32, 32, levels), 80
		if k.regime == "imagenet" {
			src, draws = noiseLevels(64, 64, levels), 20
		}
		rel, err := New(k.noise, float64(k.sev))
		if err != nil {
			t.Fatal(err)
		}
		// Sums of y, y², y³, y⁴ per level.
		s := make([][5]float64, len(levels))
		for seed := 1; seed <= draws; seed++ {
			out := ApplySeed(rel, src, uint64(seed))
			for i, y := range out.Pix {
				j := index[int(src.Pix[i])]
				v := float64(y)
				s[j][0]++
				s[j][1] += v
				s[j][2] += v * v
				s[j][3] += v * v * v
				s[j][4] += v * v * v * v
			}
		}
		for j, r := range g {
			n := s[j][0]
			m := s[j][1] / n
			e2, e3, e4 := s[j][2]/n, s[j][3]/n, s[j][4]/n
			v := e2 - m*m
			m4 := e4 - 4*m*e3 + 6*m*m*e2 - 3*m*m*m*m
			nr, mr, vr, m4r := num(r, "n"), num(r, "mean"), num(r, "var"), num(r, "m4")
			if vr == 0 && v < 1e-9 {
				if math.Abs(m-mr) > 1e-9 {
					t.Errorf("%s:%d (%s) level %d: constant output %v, reference %v", k.noise, k.sev, k.regime, levels[j], m, mr)
				}
				continue
			}
			zm := math.Abs(m-mr) / math.Sqrt(v/n+vr/nr)
			zv := math.Abs(v-vr) / math.Sqrt(math.Max(m4-v*v, 0)/n+math.Max(m4r-vr*vr, 0)/nr)
			worst = max(worst, zm, zv)
			if zm > 5.5 || zv > 5.5 {
				t.Errorf("%s:%d (%s) level %d: mean %.3f var %.3f, reference %.3f %.3f (%.1f, %.1f standard errors)", k.noise, k.sev, k.regime, levels[j], m, v, mr, vr, zm, zv)
			}
		}
	}
	t.Logf("largest difference: %.2f standard errors", worst)
}

// ApplySeed's draws depend on the seed, the image and the relation, and on
// nothing else; Apply is seed 0.
func TestSeededNoise(t *testing.T) {
	a, b := goldentest.RandomImage(32, 32, 1), goldentest.RandomImage(32, 32, 2)
	for _, in := range corruptionEntries() {
		r, _ := New(in.Name, 3)
		if _, ok := r.(Random); !ok {
			continue
		}
		if !ApplySeed(r, a, 0).Equal(r.Apply(a)) {
			t.Errorf("%s: Apply is not seed 0", r.Name())
		}
		if !ApplySeed(r, a, 7).Equal(ApplySeed(r, a, 7)) {
			t.Errorf("%s: seed 7 twice differs", r.Name())
		}
		if ApplySeed(r, a, 7).Equal(ApplySeed(r, a, 8)) {
			t.Errorf("%s: seeds 7 and 8 agree", r.Name())
		}
		r2, _ := New(in.Name, 4)
		if Rand(7, a, r).Uint64() == Rand(7, a, r2).Uint64() || Rand(7, a, r).Uint64() == Rand(7, b, r).Uint64() {
			t.Errorf("%s: streams of severities or images coincide", r.Name())
		}
		c := Compose{r, Invert{}}
		if !ApplySeed(c, a, 7).Equal(Invert{}.Apply(ApplySeed(r, a, 7))) {
			t.Errorf("%s: ApplySeed of a composition", r.Name())
		}
	}
}
