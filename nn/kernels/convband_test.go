package kernels

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestConvBands checks that shifted convolutions split into bands of
// output rows (2, 3 and 4 workers, the layout changing between calls)
// give exactly the single-threaded results, with and without a residual
// (also in place), for the output layouts of the shifted GEMM: compacted
// afterwards, written in row mode, and as wide as the phase planes.
func TestConvBands(t *testing.T) { forEachSet(t, testConvBands) }

func testConvBands(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	layouts := map[string]bool{}
	pad1 := func(s ConvShape) ConvShape {
		s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = 1, 1, 1, 1
		return s
	}
	for _, tc := range []struct {
		name string
		s    ConvShape
	}{
		// ResNet-20's stride-2 layer: rows compacted afterwards.
		{"resnet20-s2", pad1(ConvShape{InC: 16, InH: 32, InW: 32, OutC: 32, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1})},
		// Its 1×1 stride-2 shortcut: the phase planes are as wide as the output.
		{"shortcut-1x1s2", ConvShape{InC: 16, InH: 32, InW: 32, OutC: 32, KH: 1, KW: 1, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1}},
		// Row mode: rows of 62 in planes of 64 (avx512), of 24 in 26 (others).
		{"rows62", pad1(ConvShape{InC: 4, InH: 20, InW: 62, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1})},
		{"groups2", pad1(ConvShape{InC: 16, InH: 24, InW: 24, OutC: 32, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 2})},
		{"dilated-s2", ConvShape{InC: 8, InH: 33, InW: 29, OutC: 12, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadTop: 2, PadLeft: 2, PadBottom: 2, PadRight: 2, DilH: 2, DilW: 2, Groups: 1}},
		// A patch embedding (rows split into phases by transposes).
		{"patch16", ConvShape{InC: 3, InH: 64, InW: 64, OutC: 24, KH: 16, KW: 16, StrideH: 16, StrideW: 16, DilH: 1, DilW: 1, Groups: 1}},
		// 5 output rows: 3 bands of 2 for 4 workers.
		{"rows5", pad1(ConvShape{InC: 16, InH: 10, InW: 10, OutC: 64, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.s
			conv, err := newConv(s, randSlice(r, s.OutC*s.InC/s.Groups*s.KH*s.KW), randSlice(r, s.OutC), Activation{Kind: ActRelu}, stratShifted)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case conv.wph == s.OutW():
				layouts["wide"] = true
			case conv.rowMode:
				layouts["row mode"] = true
			default:
				layouts["compacted"] = true
			}
			osz := s.OutC * s.OutH() * s.OutW()
			prev := runtime.GOMAXPROCS(1)
			defer runtime.GOMAXPROCS(prev)
			srcs := [][]float32{randSlice(r, s.InC*s.InH*s.InW), randSlice(r, s.InC*s.InH*s.InW)}
			res := randSlice(r, osz)
			// want[i]: src i without, then with a residual; one worker.
			var want [][]float32
			for _, src := range srcs {
				a, b := make([]float32, osz), make([]float32, osz)
				conv.Forward(a, src, 1)
				conv.ForwardAdd(b, src, res, 1)
				want = append(want, a, b)
			}
			for _, procs := range []int{2, 3, 4, 2} {
				runtime.GOMAXPROCS(procs)
				// Forward enters the call, and then it has all procs.
				enter()
				used := conv.bandPlan(2 * conv.m * conv.n * conv.k)
				leave()
				if used == nil {
					t.Fatalf("%d procs: no bands", procs)
				}
				for i, src := range srcs {
					got := make([]float32, osz)
					conv.Forward(got, src, 1)
					checkIdentical(t, fmt.Sprintf("%d procs (%d bands), input %d", procs, used.bands, i), got, want[2*i])
					conv.ForwardAdd(got, src, res, 1)
					checkIdentical(t, fmt.Sprintf("%d procs, input %d, residual", procs, i), got, want[2*i+1])
					copy(got, res)
					conv.ForwardAdd(got, src, got, 1)
					checkIdentical(t, fmt.Sprintf("%d procs, input %d, residual in place", procs, i), got, want[2*i+1])
				}
			}
		})
	}
	if len(layouts) != 3 {
		t.Errorf("output layouts covered: %v, want all 3", layouts)
	}
}

// checkIdentical fails unless got equals want value for value.
func checkIdentical(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s: value %d is %v, want %v (one worker)", what, i, got[i], want[i])
			return
		}
	}
}
