package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// edgeSizes are the sizes the fuzz-style tests draw dimensions from: edge
// cases of the 4×24 micro-tile and of the blocking.
var edgeSizes = []int{1, 3, 7, 17, 31, 65}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = r.Float32()*2 - 1
	}
	return s
}

// checkClose fails unless got[i] is within the float32 rounding bound of
// val[i] for terms summands of total magnitude mag[i].
func checkClose(t *testing.T, what string, got []float32, val, mag []float64, terms int) {
	t.Helper()
	const u = 1.0 / (1 << 24)
	bad := 0
	for i := range val {
		tol := 2*float64(terms+2)*u*mag[i] + 1e-30
		if d := math.Abs(float64(got[i]) - val[i]); !(d <= tol) {
			if bad < 5 {
				t.Errorf("%s: element %d = %v, want %v (±%.3g)", what, i, got[i], val[i], tol)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d elements wrong", what, bad, len(val))
	}
}

type gemmCase struct {
	transA, transB bool
	m, n, k        int
	alpha, beta    float32
	pad            int // extra columns in every stored row
}

func (c gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,alpha=%v,beta=%v,pad=%d", c.transA, c.transB, c.m, c.n, c.k, c.alpha, c.beta, c.pad)
}

func runGemmCase(t *testing.T, r *rand.Rand, c gemmCase) {
	t.Helper()
	ar, ac := c.m, c.k
	if c.transA {
		ar, ac = c.k, c.m
	}
	br, bc := c.k, c.n
	if c.transB {
		br, bc = c.n, c.k
	}
	lda, ldb, ldc := ac+c.pad, bc+c.pad, c.n+c.pad
	a, b := randSlice(r, max(1, ar*lda)), randSlice(r, max(1, br*ldb))
	cm := randSlice(r, c.m*ldc)
	if c.beta == 0 {
		for i := range cm {
			if i%7 == 0 {
				cm[i] = float32(math.NaN()) // must be ignored when beta = 0
			}
		}
	}
	orig := slices.Clone(cm)
	val, mag := refGemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, orig, ldc)
	Gemm(c.transA, c.transB, c.m, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, cm, ldc)
	got := make([]float32, 0, c.m*c.n)
	for i := 0; i < c.m; i++ {
		got = append(got, cm[i*ldc:i*ldc+c.n]...)
		for j := c.n; j < ldc; j++ {
			if x, y := cm[i*ldc+j], orig[i*ldc+j]; math.Float32bits(x) != math.Float32bits(y) {
				t.Fatalf("%v: C[%d][%d] outside the matrix changed from %v to %v", c, i, j, y, x)
			}
		}
	}
	checkClose(t, c.String(), got, val, mag, c.k+1)
}

// TestGemmRandom compares Gemm with a float64 reference on random shapes
// drawn from the edge sizes, every transpose combination and several
// alpha/beta values.
func TestGemmRandom(t *testing.T) { forEachSet(t, testGemmRandom) }

func testGemmRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	iters := 300
	if testing.Short() {
		iters = 120
	}
	scalars := []float32{0, 1, 0.5, -2}
	for it := 0; it < iters; it++ {
		c := gemmCase{
			transA: r.IntN(2) == 1, transB: r.IntN(2) == 1,
			m: edgeSizes[r.IntN(len(edgeSizes))], n: edgeSizes[r.IntN(len(edgeSizes))], k: edgeSizes[r.IntN(len(edgeSizes))],
			alpha: scalars[1+r.IntN(3)], beta: scalars[r.IntN(4)], pad: r.IntN(3),
		}
		runGemmCase(t, r, c)
	}
}

// TestInterleave4 checks packA's four-row interleave of every kernel set on
// 0 to 40 values (whole vectors and tails), and that it writes nothing
// past 4n.
func TestInterleave4(t *testing.T) {
	forEachSet(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(47, 48))
		for n := 0; n <= 40; n++ {
			rows := [4][]float32{randSlice(r, n), randSlice(r, n), randSlice(r, n), randSlice(r, n)}
			d := randSlice(r, 4*n+5)
			want := slices.Clone(d)
			for p := 0; p < n; p++ {
				for k := range rows {
					want[4*p+k] = rows[k][p]
				}
			}
			interleave4(d[:4*n+5], rows[0], rows[1], rows[2], rows[3])
			if !slices.Equal(d, want) {
				t.Fatalf("n=%d: got %v, want %v", n, d, want)
			}
		}
	})
}

// TestGemmBlocking covers several depth and column blocks, tile edges in
// both directions and the row and column splits over goroutines.
func TestGemmBlocking(t *testing.T) { forEachSet(t, testGemmBlocking) }

func testGemmBlocking(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []gemmCase{
		{m: 65, n: 800, k: 300, alpha: 1},                 // column split, 2 depth blocks, 2 column blocks
		{m: 67, n: 31, k: 600, alpha: 1, beta: 1, pad: 1}, // row split, 3 depth blocks
		{transA: true, transB: true, m: 130, n: 97, k: 257, alpha: 0.5, beta: -2},
		{m: 1, n: 1000, k: 513, alpha: 1},              // GEMV-like
		{m: 300, n: 1, k: 129, alpha: 1, transB: true}, // single column
		{m: 4, n: 24, k: 256, alpha: 1},                // exactly one tile and one block
		{m: 8, n: 48, k: 512, alpha: -1, beta: 1},
	} {
		runGemmCase(t, r, c)
	}
}

// TestGemmDegenerate checks k = 0 and alpha = 0 (C = beta·C) and that empty
// products leave C alone.
func TestGemmDegenerate(t *testing.T) {
	c := []float32{1, 2, 3, 4}
	Gemm(false, false, 2, 2, 0, 1, nil, 0, nil, 2, 3, c, 2)
	if !slices.Equal(c, []float32{3, 6, 9, 12}) {
		t.Errorf("k=0, beta=3: C = %v", c)
	}
	Gemm(false, false, 2, 2, 1, 0, []float32{1, 1}, 1, []float32{1, 1}, 2, 0, c, 2)
	if !slices.Equal(c, []float32{0, 0, 0, 0}) {
		t.Errorf("alpha=0, beta=0: C = %v", c)
	}
	c = []float32{5}
	Gemm(false, false, 0, 1, 1, 1, nil, 1, []float32{1}, 1, 0, c, 1)
	Gemm(false, false, 1, 0, 1, 1, []float32{1}, 1, nil, 1, 0, c, 1)
	if c[0] != 5 {
		t.Errorf("empty product changed C to %v", c)
	}
}

// TestGemmPanics checks the messages of misuse.
func TestGemmPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func()
		want string
	}{
		{"short A", func() {
			Gemm(false, false, 2, 2, 2, 1, make([]float32, 3), 2, make([]float32, 4), 2, 0, make([]float32, 4), 2)
		}, "A has 3 values"},
		{"short C", func() {
			Gemm(false, false, 2, 2, 2, 1, make([]float32, 4), 2, make([]float32, 4), 2, 0, make([]float32, 3), 2)
		}, "C has 3 values"},
		{"small ldb", func() {
			Gemm(false, true, 2, 2, 3, 1, make([]float32, 6), 3, make([]float32, 6), 2, 0, make([]float32, 4), 2)
		}, "leading dimension of B is 2"},
		{"negative", func() { Gemm(false, false, -1, 2, 2, 1, nil, 2, nil, 2, 0, nil, 2) }, "negative size"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if s, _ := r.(string); !strings.Contains(s, tc.want) {
					t.Errorf("panic %v, want one containing %q", r, tc.want)
				}
			}()
			tc.f()
		})
	}
}

var testActs = []Activation{
	{Kind: ActNone},
	{Kind: ActRelu},
	{Kind: ActLeakyRelu, Alpha: 0.1},
	{Kind: ActClip, Min: -0.25, Max: 0.5},
	{Kind: ActClip, Min: 0.5, Max: -0.25}, // min(max(x, Min), Max) = Max
}

type convCase struct {
	s    ConvShape
	bias bool
	act  Activation
	n    int
}

func runConvCase(t *testing.T, r *rand.Rand, c convCase) *Conv {
	t.Helper()
	return runConvStrategy(t, r, c, stratAuto)
}

// runConvStrategy is runConvCase with a forced strategy.
func runConvStrategy(t *testing.T, r *rand.Rand, c convCase, strat strategy) *Conv {
	t.Helper()
	s := c.s
	conv, w, bias, src := newRandConv(t, r, c, strat)
	osz := s.OutC * s.OutH() * s.OutW()
	dst := randSlice(r, c.n*osz+5) // trailing values must stay untouched
	tail := slices.Clone(dst[c.n*osz:])
	conv.Forward(dst, src, c.n)
	val, mag := refConv(s, w, bias, c.act, src, c.n)
	name := fmt.Sprintf("%+v bias=%v act=%+v n=%d strategy=%s", s, c.bias, c.act, c.n, conv.Strategy())
	checkClose(t, name, dst[:c.n*osz], val, mag, s.InC/s.Groups*s.KH*s.KW+1)
	if !slices.Equal(dst[c.n*osz:], tail) {
		t.Errorf("%s: wrote past the output", name)
	}
	return conv
}

// newRandConv draws the weights, the bias (when c.bias) and the input of
// case c and builds its convolution with strategy strat.
func newRandConv(t *testing.T, r *rand.Rand, c convCase, strat strategy) (conv *Conv, w, bias, src []float32) {
	t.Helper()
	s := c.s
	w = randSlice(r, s.OutC*s.InC/s.Groups*s.KH*s.KW)
	if c.bias {
		bias = randSlice(r, s.OutC)
	}
	conv, err := newConv(s, w, bias, c.act, strat)
	if err != nil {
		t.Fatalf("%+v: %v", s, err)
	}
	return conv, w, bias, randSlice(r, c.n*s.InC*s.InH*s.InW)
}

// randConvShape draws a valid convolution shape from the edge sizes.
func randConvShape(r *rand.Rand) ConvShape {
	for {
		g := []int{1, 1, 1, 2, 3}[r.IntN(5)]
		s := ConvShape{
			InC: edgeSizes[r.IntN(4)] * g, OutC: edgeSizes[r.IntN(5)] * g,
			InH: edgeSizes[r.IntN(len(edgeSizes))], InW: edgeSizes[r.IntN(len(edgeSizes))],
			KH: 1 + r.IntN(3), KW: 1 + r.IntN(3),
			StrideH: 1 + r.IntN(3), StrideW: 1 + r.IntN(3),
			PadTop: r.IntN(3), PadLeft: r.IntN(3), PadBottom: r.IntN(3), PadRight: r.IntN(3),
			DilH: 1 + r.IntN(2), DilW: 1 + r.IntN(2),
			Groups: g,
		}
		if r.IntN(3) == 0 { // depthwise
			s.Groups, s.OutC = s.InC, s.InC*(1+r.IntN(2))
		}
		if r.IntN(4) == 0 { // pointwise
			s.KH, s.KW, s.StrideH, s.StrideW, s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = 1, 1, 1, 1, 0, 0, 0, 0
		}
		if s.Validate() == nil && s.InC*s.InH*s.InW*s.OutC < 2e6 {
			return s
		}
	}
}

// TestConvRandom compares Conv with a float64 direct convolution on random
// shapes (channels and sizes from the edge sizes, strides, asymmetric pads,
// dilations, groups, depthwise, every activation, with and without bias).
func TestConvRandom(t *testing.T) { forEachSet(t, testConvRandom) }

func testConvRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	iters := 250
	if testing.Short() {
		iters = 100
	}
	seen := map[string]int{}
	for it := 0; it < iters; it++ {
		c := convCase{s: randConvShape(r), bias: r.IntN(2) == 0, act: testActs[r.IntN(len(testActs))], n: 1 + r.IntN(2)}
		seen[runConvCase(t, r, c).Strategy()]++
		// Every other strategy that applies to any shape.
		for _, st := range []strategy{stratIm2col, stratDirect, stratShifted} {
			seen[runConvStrategy(t, r, c, st).Strategy()+"(forced)"]++
		}
		if winogradApplies(c.s) {
			seen[runConvStrategy(t, r, c, stratWinograd).Strategy()+"(forced)"]++
		}
	}
	for _, st := range []string{"pointwise-gemm", "shifted-gemm", "im2col-gemm", "direct", "winograd-f2x2(forced)"} {
		if seen[st] == 0 && !refKernels { // refkernels builds choose "reference"
			t.Errorf("no random case used strategy %s (%v)", st, seen)
		}
	}
}

// modelShapes are real layer shapes of the shipped models (SqueezeNet 1.1
// at 224, ResNet-20 at 32, yolov3-tiny at 416), smallest spatial sizes
// where the layer is too large for a unit test.
var modelShapes = []struct {
	name string
	s    ConvShape
}{
	{"squeezenet/conv1", ConvShape{InC: 3, InH: 224, InW: 224, OutC: 64, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1}},
	{"squeezenet/fire2-squeeze", ConvShape{InC: 64, InH: 55, InW: 55, OutC: 16, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"squeezenet/fire2-expand1", ConvShape{InC: 16, InH: 55, InW: 55, OutC: 64, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"squeezenet/fire2-expand3", ConvShape{InC: 16, InH: 55, InW: 55, OutC: 64, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"squeezenet/fire9-expand3", ConvShape{InC: 64, InH: 13, InW: 13, OutC: 256, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"squeezenet/conv10", ConvShape{InC: 512, InH: 13, InW: 13, OutC: 1000, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"resnet20/16", ConvShape{InC: 16, InH: 32, InW: 32, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"resnet20/32s2", ConvShape{InC: 16, InH: 32, InW: 32, OutC: 32, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"resnet20/64", ConvShape{InC: 64, InH: 8, InW: 8, OutC: 64, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/conv1", ConvShape{InC: 3, InH: 416, InW: 416, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/conv2", ConvShape{InC: 16, InH: 208, InW: 208, OutC: 32, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/conv5", ConvShape{InC: 128, InH: 26, InW: 26, OutC: 256, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/conv7", ConvShape{InC: 512, InH: 13, InW: 13, OutC: 1024, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/conv8", ConvShape{InC: 1024, InH: 13, InW: 13, OutC: 256, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}},
	{"yolo/head13", ConvShape{InC: 512, InH: 13, InW: 13, OutC: 255, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}},
	// The model zoo's patch embeddings (kernel = stride; from stride 8
	// padInput splits whole rows into their phases by a transpose, from
	// 8 patches a row straight into the phase planes), and
	// patch shapes whose rows do not split evenly (a width past the last
	// patch), with stride 3 or 8.
	{"vit/patch16", ConvShape{InC: 3, InH: 224, InW: 224, OutC: 96, KH: 16, KW: 16, StrideH: 16, StrideW: 16, DilH: 1, DilW: 1, Groups: 1}},
	{"convnext/stem4", ConvShape{InC: 3, InH: 224, InW: 224, OutC: 24, KH: 4, KW: 4, StrideH: 4, StrideW: 4, DilH: 1, DilW: 1, Groups: 1}},
	{"patch4-uneven", ConvShape{InC: 5, InH: 30, InW: 38, OutC: 7, KH: 4, KW: 4, StrideH: 4, StrideW: 4, DilH: 1, DilW: 1, Groups: 1}},
	{"patch3", ConvShape{InC: 2, InH: 27, InW: 33, OutC: 9, KH: 3, KW: 3, StrideH: 3, StrideW: 3, DilH: 1, DilW: 1, Groups: 1}},
	{"patch8-uneven", ConvShape{InC: 3, InH: 40, InW: 70, OutC: 10, KH: 8, KW: 8, StrideH: 8, StrideW: 8, DilH: 1, DilW: 1, Groups: 1}},
	{"patch8", ConvShape{InC: 2, InH: 24, InW: 72, OutC: 5, KH: 8, KW: 8, StrideH: 8, StrideW: 8, DilH: 1, DilW: 1, Groups: 1}},
	// Rows of 8 and of 17 patches: one strip of 8, three (the last
	// overlapping the second).
	{"patch16-8", ConvShape{InC: 2, InH: 32, InW: 128, OutC: 6, KH: 16, KW: 16, StrideH: 16, StrideW: 16, DilH: 1, DilW: 1, Groups: 1}},
	{"patch8-17", ConvShape{InC: 3, InH: 16, InW: 136, OutC: 4, KH: 8, KW: 8, StrideH: 8, StrideW: 8, DilH: 1, DilW: 1, Groups: 1}},
}

// TestConvModelShapes checks the real layer shapes (big ones skipped in
// -short mode: the float64 reference is slow).
func TestConvModelShapes(t *testing.T) { forEachSet(t, testConvModelShapes) }

func testConvModelShapes(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for i, ms := range modelShapes {
		s := ms.s
		flops := 2 * s.OutC * s.OutH() * s.OutW() * s.InC * s.KH * s.KW
		if testing.Short() && flops > 2e8 {
			continue
		}
		t.Run(ms.name, func(t *testing.T) {
			runConvCase(t, r, convCase{s: s, bias: true, act: testActs[i%len(testActs)], n: 1})
		})
	}
}

// TestConvDeterministic checks that results do not depend on how the work
// is split over goroutines (GOMAXPROCS 1 or 2, concurrent callers) and
// that concurrent Forward calls on one Conv are correct.
func TestConvDeterministic(t *testing.T) { forEachSet(t, testConvDeterministic) }

func testConvDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for _, s := range []ConvShape{
		// Winograd in blocks of tile rows, and in groups of output channels.
		{InC: 32, InH: 27, InW: 27, OutC: 48, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
		{InC: 64, InH: 8, InW: 8, OutC: 72, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
	} {
		conv, err := NewConv(s, randSlice(r, s.OutC*s.InC*9), randSlice(r, s.OutC), Activation{Kind: ActRelu})
		if err != nil {
			t.Fatal(err)
		}
		src := randSlice(r, s.InC*s.InH*s.InW)
		want := make([]float32, s.OutC*s.OutH()*s.OutW())
		prev := runtime.GOMAXPROCS(1)
		conv.Forward(want, src, 1)
		runtime.GOMAXPROCS(max(2, prev))
		var wg sync.WaitGroup
		outs := make([][]float32, 4)
		for i := range outs {
			outs[i] = make([]float32, len(want))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 3 {
					conv.Forward(outs[i], src, 1)
				}
			}()
		}
		wg.Wait()
		got := make([]float32, len(want))
		conv.Forward(got, src, 1)
		runtime.GOMAXPROCS(prev)
		outs = append(outs, got)
		for i, o := range outs {
			if !slices.Equal(o, want) {
				t.Errorf("%+v: run %d differs from the single-threaded result", s, i)
			}
		}
	}
}

// TestConvNoAlloc checks that Forward (every strategy) and MaxPool allocate
// nothing after warm-up on one goroutine.
func TestConvNoAlloc(t *testing.T) { forEachSet(t, testConvNoAlloc) }

func testConvNoAlloc(t *testing.T) {
	if refKernels {
		t.Skip("the naive reference of refkernels builds allocates")
	}
	r := rand.New(rand.NewPCG(11, 12))
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	seen := map[string]bool{}
	for _, s := range []ConvShape{
		{InC: 16, InH: 20, InW: 20, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
		{InC: 16, InH: 20, InW: 20, OutC: 16, KH: 1, KW: 1, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1},
		{InC: 16, InH: 20, InW: 20, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 16},
		{InC: 16, InH: 20, InW: 20, OutC: 16, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1, Groups: 1},
		{InC: 16, InH: 20, InW: 3, OutC: 16, KH: 3, KW: 2, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1},
		{InC: 256, InH: 6, InW: 6, OutC: 16, KH: 3, KW: 3, StrideH: 1, StrideW: 1, PadTop: 1, PadLeft: 1, PadBottom: 1, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
	} {
		conv, err := NewConv(s, randSlice(r, s.OutC*s.InC/s.Groups*s.KH*s.KW), nil, Activation{})
		if err != nil {
			t.Fatal(err)
		}
		src, dst := randSlice(r, s.InC*s.InH*s.InW), make([]float32, s.OutC*s.OutH()*s.OutW())
		if a := testing.AllocsPerRun(20, func() { conv.Forward(dst, src, 1) }); a != 0 {
			t.Errorf("%s: %v allocations per Forward", conv.Strategy(), a)
		}
		seen[conv.Strategy()] = true
	}
	if len(seen) != 5 {
		t.Errorf("strategies covered: %v, want all 5", seen)
	}
	ps := PoolShape{InH: 21, InW: 21, OutH: 10, OutW: 10, KH: 3, KW: 3, StrideH: 2, StrideW: 2, DilH: 1, DilW: 1}
	src, dst := randSlice(r, 4*21*21), make([]float32, 4*100)
	MaxPool(dst, src, 4, ps) // warm the scratch pool
	if a := testing.AllocsPerRun(20, func() { MaxPool(dst, src, 4, ps) }); a != 0 {
		t.Errorf("MaxPool: %v allocations per call", a)
	}
}

// TestNewConvErrors checks the errors of bad arguments.
func TestNewConvErrors(t *testing.T) {
	ok := ConvShape{InC: 4, InH: 5, InW: 5, OutC: 2, KH: 3, KW: 3, StrideH: 1, StrideW: 1, DilH: 1, DilW: 1, Groups: 1}
	bad := ok
	bad.Groups = 3
	for _, tc := range []struct {
		name   string
		s      ConvShape
		w, b   []float32
		act    Activation
		substr string
	}{
		{"weight size", ok, make([]float32, 71), nil, Activation{}, "weight has 71 values"},
		{"bias size", ok, make([]float32, 72), make([]float32, 3), Activation{}, "bias has 3 values, want 2"},
		{"groups", bad, make([]float32, 72), nil, Activation{}, "not divisible by 3 groups"},
		{"activation", ok, make([]float32, 72), nil, Activation{Kind: 9}, "unknown activation kind 9"},
		{"kernel too large", ConvShape{InC: 4, InH: 5, InW: 1, OutC: 2, KH: 3, KW: 3, StrideH: 2, StrideW: 2, PadRight: 1, DilH: 1, DilW: 1, Groups: 1},
			make([]float32, 72), nil, Activation{}, "larger than the padded input"},
	} {
		if _, err := NewConv(tc.s, tc.w, tc.b, tc.act); err == nil || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.substr)
		}
	}
	conv, err := NewConv(ok, make([]float32, 72), nil, Activation{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r, _ := recover().(string); !strings.Contains(r, "need 100 input and 18 output values, have 99 and 18") {
			t.Errorf("short input: panic %q", r)
		}
	}()
	conv.Forward(make([]float32, 18), make([]float32, 99), 1)
}

// TestParallelFor: the chunks cover [0, n) exactly once, none is empty and
// there are at most w of them.
func TestParallelFor(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for w := 1; w <= 6; w++ {
			var mu sync.Mutex
			seen := make([]int, n)
			chunks := 0
			ParallelFor(n, w, func(i0, i1 int) {
				mu.Lock()
				defer mu.Unlock()
				chunks++
				if i0 >= i1 && n > 0 {
					t.Errorf("n=%d w=%d: empty chunk [%d, %d)", n, w, i0, i1)
				}
				for i := i0; i < i1; i++ {
					seen[i]++
				}
			})
			if chunks > max(w, 1) {
				t.Errorf("n=%d w=%d: %d chunks", n, w, chunks)
			}
			for i, c := range seen {
				if c != 1 {
					t.Errorf("n=%d w=%d: index %d covered %d times", n, w, i, c)
				}
			}
		}
	}
}

// TestGemmRowsIndependent checks that Gemm computes each row of C the same
// way, bit for bit, whatever the number of rows (nn stacks the images of a
// batch as rows: an image's results must not depend on its batch), with
// depths of several blocks and row counts past one block of packed A.
func TestGemmRowsIndependent(t *testing.T) { forEachSet(t, testGemmRowsIndependent) }

func testGemmRowsIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const m, n, k = 1000, 40, 700
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	all := make([]float32, m*n)
	Gemm(false, false, m, n, k, 1, a, k, b, n, 0, all, n)
	for _, rows := range [][2]int{{0, 1}, {5, 6}, {0, 7}, {300, 700}, {999, 1000}} {
		r0, r1 := rows[0], rows[1]
		part := make([]float32, (r1-r0)*n)
		Gemm(false, false, r1-r0, n, k, 1, a[r0*k:], k, b, n, 0, part, n)
		for i, v := range part {
			if w := all[r0*n+i]; math.Float32bits(v) != math.Float32bits(w) {
				t.Fatalf("rows %d…%d alone: element %d is %v, %v in the %d-row product", r0, r1-1, i, v, w, m)
			}
		}
	}
}
