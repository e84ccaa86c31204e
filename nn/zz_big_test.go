package nn

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/amt-dev/amt/internal/goldentest"
	"gorgonia.org/tensor"
)

func TestZZBig(t *testing.T) {
	dir := os.Getenv("BIG")
	if dir == "" {
		t.Skip()
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
	for _, f := range files {
		if os.Getenv("BIGRUN") != "" && !strings.Contains(f, os.Getenv("BIGRUN")) {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".onnx")
		base := name[:strings.LastIndex(name, "_o")]
		m, err := Load(f)
		if err != nil {
			fmt.Println(name, "LOAD", err)
			continue
		}
		x := goldentest.ReadF32(t, filepath.Join(dir, base+".in.f32"))
		hw := int(math.Round(math.Sqrt(float64(len(x) / 12))))
		want := goldentest.ReadF32(t, filepath.Join(dir, name+".ort.f32"))
		in := tensor.New(tensor.WithShape(4, 3, hw, hw), tensor.WithBacking(x))
		outs, err := m.Run(in)
		if err != nil {
			fmt.Println(name, "RUN", err)
			continue
		}
		got := outs[0].Data().([]float32)
		mx, d4 := 0.0, 0.0
		for i := range want {
			mx = math.Max(mx, math.Abs(float64(want[i])))
			d4 = math.Max(d4, math.Abs(float64(got[i]-want[i])))
		}
		d1 := 0.0
		per := len(x) / 4
		for img := 0; img < 4; img++ {
			o, err := m.Run(tensor.New(tensor.WithShape(1, 3, hw, hw), tensor.WithBacking(x[img*per:(img+1)*per])))
			if err != nil {
				t.Fatal(err)
			}
			g := o[0].Data().([]float32)
			w := want[img*len(g) : (img+1)*len(g)]
			for i := range g {
				d1 = math.Max(d1, math.Abs(float64(g[i]-w[i])))
			}
		}
		x1 := tensor.New(tensor.WithShape(1, 3, hw, hw), tensor.WithBacking(x[:per]))
		var ts []float64
		for i := 0; i < 7; i++ {
			t0 := time.Now()
			m.Run(x1)
			ts = append(ts, float64(time.Since(t0).Microseconds())/1000)
		}
		sort.Float64s(ts)
		fmt.Printf("%-26s max|y| %.3g  rel err b4 %.2g b1 %.2g   amt b1 min %.1f ms median %.1f ms\n", name, mx, d4/math.Max(1, mx), d1/math.Max(1, mx), ts[0], ts[3])
	}
}
