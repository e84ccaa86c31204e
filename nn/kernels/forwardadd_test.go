package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// runConvAddCase runs ForwardAdd with strategy strat (a residual in its own
// slice, or in place when inPlace) and compares it with the float64
// reference act(conv + bias + res), and with the unfused Forward (no
// activation) followed by the addition and the activation.
func runConvAddCase(t *testing.T, r *rand.Rand, c convCase, strat strategy, inPlace bool) string {
	t.Helper()
	s := c.s
	conv, w, bias, src := newRandConv(t, r, c, strat)
	osz := s.OutC * s.OutH() * s.OutW()
	res := randSlice(r, c.n*osz)
	resCopy := slices.Clone(res)
	dst := randSlice(r, c.n*osz+5) // trailing values must stay untouched
	if inPlace {
		copy(dst, res)
		conv.ForwardAdd(dst, src, dst, c.n)
	} else {
		conv.ForwardAdd(dst, src, res, c.n)
		if !slices.Equal(res, resCopy) {
			t.Errorf("ForwardAdd modified the residual")
		}
	}
	tail := slices.Clone(dst[c.n*osz:])
	val, mag := refConv(s, w, bias, Activation{}, src, c.n)
	for i := range val {
		val[i] = refAct(c.act, val[i]+float64(resCopy[i]))
		mag[i] += math.Abs(float64(resCopy[i]))
	}
	name := fmt.Sprintf("%+v bias=%v act=%+v n=%d strategy=%s inPlace=%v", s, c.bias, c.act, c.n, conv.Strategy(), inPlace)
	checkClose(t, name, dst[:c.n*osz], val, mag, s.InC/s.Groups*s.KH*s.KW+2)
	if !slices.Equal(dst[c.n*osz:], tail) {
		t.Errorf("%s: wrote past the output", name)
	}

	// Unfused: the same weights without activation, then add and activate.
	plain, err := newConv(s, w, bias, Activation{}, strat)
	if err != nil {
		t.Fatal(err)
	}
	unf := make([]float32, c.n*osz)
	plain.Forward(unf, src, c.n)
	for i := range unf {
		unf[i] = c.act.apply1(unf[i] + resCopy[i])
	}
	for i := range unf {
		if d := math.Abs(float64(unf[i] - dst[i])); d > 1e-5*(1+mag[i]) {
			t.Errorf("%s: fused %v, unfused %v at %d", name, dst[i], unf[i], i)
			break
		}
	}
	return conv.Strategy()
}

// TestConvForwardAdd checks the fused residual addition on random shapes,
// with every strategy that applies (including the naive reference of
// refkernels builds), residual in its own slice and in place.
func TestConvForwardAdd(t *testing.T) { forEachSet(t, testConvForwardAdd) }

func testConvForwardAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	iters := 120
	if testing.Short() {
		iters = 50
	}
	seen := map[string]int{}
	for it := 0; it < iters; it++ {
		c := convCase{s: randConvShape(r), bias: r.IntN(2) == 0, act: testActs[r.IntN(len(testActs))], n: 1 + r.IntN(2)}
		if it%4 == 0 { // a 3×3 stride-1 shape, for Winograd
			for c.s.KH, c.s.KW, c.s.StrideH, c.s.StrideW, c.s.DilH, c.s.DilW = 3, 3, 1, 1, 1, 1; !winogradApplies(c.s) || c.s.Validate() != nil; {
				c.s = randConvShape(r)
				c.s.KH, c.s.KW, c.s.StrideH, c.s.StrideW, c.s.DilH, c.s.DilW = 3, 3, 1, 1, 1, 1
			}
		}
		strats := []strategy{stratAuto, stratIm2col, stratDirect, stratShifted, stratReference}
		if winogradApplies(c.s) {
			strats = append(strats, stratWinograd)
		}
		for _, st := range strats {
			seen[runConvAddCase(t, r, c, st, it%2 == 0)]++
		}
	}
	for _, st := range []string{"pointwise-gemm", "shifted-gemm", "im2col-gemm", "direct", "winograd-f2x2", "reference"} {
		if seen[st] == 0 && (!refKernels || st == "reference") { // refkernels builds choose "reference"
			t.Errorf("no random case used strategy %s (%v)", st, seen)
		}
	}
}

// TestConvForwardAddModelShapes checks ResNet-20's residual layers (the
// shifted strategy with compaction, and pointwise) at batch 3.
func TestConvForwardAddModelShapes(t *testing.T) { forEachSet(t, testConvForwardAddModelShapes) }

func testConvForwardAddModelShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, name := range []string{"resnet20/16", "resnet20/64", "squeezenet/fire2-expand1"} {
		i := slices.IndexFunc(modelShapes, func(m struct {
			name string
			s    ConvShape
		}) bool {
			return m.name == name
		})
		for _, inPlace := range []bool{false, true} {
			runConvAddCase(t, r, convCase{s: modelShapes[i].s, bias: true, act: Activation{Kind: ActRelu}, n: 3}, stratAuto, inPlace)
		}
	}
}

// TestConvForwardAddPanics checks the residual's length.
func TestConvForwardAddPanics(t *testing.T) {
	s := ConvShape{InC: 2, InH: 5, InW: 5, OutC: 4, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}
	conv, err := NewConv(s, make([]float32, 4*2*9), nil, Activation{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if recover() == nil {
			t.Error("ForwardAdd with a short residual did not panic")
		}
	}()
	conv.ForwardAdd(make([]float32, 4*9), make([]float32, 2*25), make([]float32, 4*9-1), 1)
}
