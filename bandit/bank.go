package bandit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/internal/limits"
	"github.com/amt-dev/amt/internal/tape"
)

// gdState is what Vowpal Wabbit 8.x keeps once per model: the learning rate,
// the normalisation accumulators (T = total importance weight, S = weighted
// sum of normalised squared feature norms) and the range of regression
// labels seen, to which output predictions are clipped.
type gdState struct {
	Eta    float64 // learning rate (VW -l, default 0.5)
	T, S   float64 // normalisation accumulators
	Lo, Hi float64 // label range seen; starts at [0, 0]
}

// widen extends the label range to include y.
func (s *gdState) widen(y float64) {
	s.Lo = min(s.Lo, y)
	s.Hi = max(s.Hi, y)
}

// clip clamps a raw prediction to the label range.
func (s *gdState) clip(v float64) float64 { return min(max(v, s.Lo), s.Hi) }

// update applies VW's default per-weight step (adaptive, normalised,
// importance-invariant, power_t 0.5) for squared loss to the weights w with
// features x: x2[i] = x[i]², xin[i] = x[i]/N[i] (0 for an absent feature),
// normx = Σ x2[i]/N[i]², pred = the (clipped) prediction, y the label,
// wt the importance weight. G holds the per-weight squared-gradient sums;
// xr is scratch of len(w).
func (s *gdState) update(w, G, x, x2, xin, xr []float32, normx, pred, y, wt float64) {
	diff := pred - y
	if diff == 0 || wt == 0 {
		return
	}
	// Numeric guards (never reached by realistic input): the squared
	// gradient is capped at 1e20 and the accumulators at 3e38, so float32
	// state cannot overflow to Inf/NaN.
	g2 := float32(min(wt*4*diff*diff, 1e20))
	n := len(w)
	sum := gdPass1(G[:n], x[:n], x2[:n], xin[:n], xr[:n], g2)
	s.T += wt
	s.S += wt * normx
	m := 1.0
	if s.S > 0 {
		m = math.Sqrt(s.T / s.S)
	}
	ss := float64(sum) * m
	a := s.Eta * wt
	var u float64
	if a*ss < 1e-6 {
		u = 2 * (y - pred) * a
	} else {
		u = (y - pred) * (1 - math.Exp(-2*a*ss)) / ss
	}
	// Weights are clamped to ±1e20 so that no dot product with a valid
	// context (|x| <= MaxAbsContext) can overflow, whatever the sequence of
	// valid inputs.
	gdPass2(w, xr[:n], float32(u*m))
}

// bank is M scalar cost regressors over one input x of dimension D plus
// VW's constant feature: linear (H = 0) or each a network with one hidden
// layer of H tanh units (VW --nn H, no sharing between regressors). All M
// regressors form one batched network whose forward pass is a Gorgonia
// graph built once:
//
//	pre = U · [x, 1]                 U: [M·H, D+1]  (hidden biases in the last column)
//	h   = min(max(pre, −3), 3)       VW's pre-activation clamp
//	z   = tanh(h)
//	raw = Σ_j (V ⊙ z)_{m,j} + VB     V: [M, H], VB: [M]
//
// (linear: raw = U · [x, 1] with U: [M, D+1]). The update is VW's nn
// reduction applied by hand to the cached forward values: the output layer
// learns first on the features [z, 1], then every hidden unit regresses its
// clamped pre-activation towards clamp(h − ν(ŷ−y)(1−z²), −3, 3) with ν the
// updated output weight, each with the per-weight rule of gdState.update.
// That is back-propagation with VW's step rule. Gorgonia's autodiff is not
// used for it: the per-weight rule needs, for every weight, its gradient,
// its accumulator and an inverse square root, and materialising the
// [M·H, D+1] gradient tensor (1.2 M entries for the paper's 36-arm cover
// bank) and walking it again costs more than the whole 2 ms decision
// budget. Instead the gradient of each hidden unit (a scalar times x) is
// applied in two fused per-weight passes (gd.go), in SSE assembly on amd64
// and in Go elsewhere, bit for bit alike.
// TestUpdateFollowsGorgoniaGradient checks the hand-applied step against
// Gorgonia's symbolic gradient of the same network; see
// BenchmarkHierarchicalDecision for the speed.
//
// Deviations from VW 8.x, all small: the feature scale N (max |x_i|) is
// kept per regressor and feature instead of per weight (all hidden units of
// a regressor see the same x, so they differ only when VW skips a zero-loss
// unit); VW's lazy initialisation steps (hidden biases towards U(−0.5,0.5),
// output weights towards U(−0.5,0.5)/√H, both with feature value 1) are
// taken at construction with a seeded PCG instead of merand48, leaving the
// weights, accumulators, scales and T, S where those steps leave them (see
// initState); the label range is widened by a label before the update that
// uses it; tanh is exact (VW uses a fast approximation); logged
// probabilities below 1e-6 count as 1e-6 in importance weights and DR
// corrections; numeric guards clamp weights to ±1e20 and squared-gradient
// sums to 3e38; the per-weight inverse square root is exact (VW
// approximates it; gd.go says why). For the same inputs and seed, results
// are byte-identical on every amd64 host, Intel or AMD; other
// architectures sum the forward pass's dot products in another order
// (gonum's generic code), so their last bits differ.
// TestMatchesVWMeasurements compares the learning behaviour with real VW
// 8.8.1 and 9.10.0 runs.
type bank struct {
	M, D, H int

	U, GU []float32 // input weights and their squared-gradient sums
	NU    []float32 // [M, D+1] feature scales
	nuInv []float32 // 1/NU (0 where NU = 0)
	V, VB []float32 // [M, H] output weights and [M] output biases (NN only)
	GV    []float32 // [M, H+1] squared-gradient sums of [V, VB]
	NV    []float32 // [M, H+1]

	// forward cache for xa
	xa    []float32 // [D+1], last = 1
	hid   []float32 // [M·H] clamped pre-activations
	z     []float32 // [M·H]
	raw   []float32 // [M]
	fresh bool      // cache matches xa and the current weights

	// scratch
	x2, ax   []float32 // x² and |x| of the cached input
	invN, xr []float32 // x/N of the regressor being updated, scratch
	feat     []float32 // [H+1] output-layer features
	vtmp     []float32 // [H+1] output-layer weights
	f2, finv []float32

	fwd *gorgonia.ExprGraph
	vm  gorgonia.VM
	run *tape.Runner // runs vm
	out struct{ hid, z, raw *gorgonia.Node }
}

// initState returns the gdState of a model made of banks, with the
// normalisation accumulators holding VW's initialisation steps: one per
// hidden bias and one per output weight (importance weight 1, normalised
// norm 1), all taken before the first example is learned.
func initState(eta float64, banks ...*bank) gdState {
	n := 0.0
	for _, b := range banks {
		n += float64(2 * b.M * b.H)
	}
	return gdState{Eta: eta, T: n, S: n}
}

// newBank returns M regressors of input dimension d with h hidden units
// (0 = linear), initialised from rng.
func newBank(m, d, h int, rng *rand.Rand) (*bank, error) {
	if m < 1 || d < 1 || h < 0 {
		return nil, fmt.Errorf("bandit: regressor bank needs M >= 1, D >= 1, H >= 0; got %d, %d, %d", m, d, h)
	}
	if w := int64(m) * int64(max(h, 1)) * int64(d+1); w > limits.BankWeights {
		return nil, fmt.Errorf("bandit: a regressor bank of %d regressors × %d hidden units × %d inputs has %d weights, more than the limit of %d (fewer arms, bags, policies, hidden units or a smaller context)",
			m, h, d+1, w, limits.BankWeights)
	}
	b := &bank{M: m, D: d, H: h}
	rows := m
	if h > 0 {
		rows = m * h
	}
	b.U = alignedFloats(rows * (d + 1))
	b.GU = alignedFloats(rows * (d + 1))
	b.NU = alignedFloats(m * (d + 1))
	b.nuInv = alignedFloats(m * (d + 1))
	if h > 0 {
		b.V = alignedFloats(m * h)
		b.VB = alignedFloats(m)
		b.GV = alignedFloats(m * (h + 1))
		b.NV = alignedFloats(m * (h + 1))
		lazy := func(l float64) float32 {
			if l == 0 {
				return 0
			}
			return float32(l * (1 - math.Exp(-1/(2*math.Abs(l)))))
		}
		for r := 0; r < m; r++ {
			for j := 0; j < h; j++ {
				l := rng.Float64() - 0.5
				row := (r*h + j) * (d + 1)
				b.U[row+d] = lazy(l)
				b.GU[row+d] = float32(4 * l * l)
				b.NU[r*(d+1)+d] = 1
				b.nuInv[r*(d+1)+d] = 1
				lv := (rng.Float64() - 0.5) / math.Sqrt(float64(h))
				b.V[r*h+j] = lazy(lv)
				// VW's init step used the feature value 1: it leaves the
				// weight's scale at 1 and its accumulator at 4L².
				b.GV[r*(h+1)+j] = float32(4 * lv * lv)
				b.NV[r*(h+1)+j] = 1
			}
		}
		b.hid = alignedFloats(m * h)
		b.z = alignedFloats(m * h)
		b.feat = alignedFloats(h + 1)
		b.vtmp = alignedFloats(h + 1)
		b.f2 = alignedFloats(h + 1)
		b.finv = alignedFloats(h + 1)
	}
	b.xa = alignedFloats(d + 1)
	b.xa[d] = 1
	b.raw = alignedFloats(m)
	b.x2 = alignedFloats(d + 1)
	b.ax = alignedFloats(d + 1)
	b.invN = alignedFloats(d + 1)
	b.xr = alignedFloats(max(d+1, h+1))
	if err := b.build(); err != nil {
		return nil, err
	}
	return b, nil
}

// build compiles the forward graph over the bank's weight slices (the graph
// reads them in place, so updates need no re-binding).
func (b *bank) build() error {
	g := gorgonia.NewGraph()
	d1 := b.D + 1
	xa := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(d1), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(d1), tensor.WithBacking(b.xa))))
	if b.H == 0 {
		u := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(b.M, d1), gorgonia.WithName("W"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(b.M, d1), tensor.WithBacking(b.U))))
		raw, err := gorgonia.Mul(u, xa)
		if err != nil {
			return fmt.Errorf("bandit: building linear graph: %w", err)
		}
		b.out.raw = raw
	} else {
		mh := b.M * b.H
		u := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(mh, d1), gorgonia.WithName("U"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(mh, d1), tensor.WithBacking(b.U))))
		v := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(b.M, b.H), gorgonia.WithName("V"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(b.M, b.H), tensor.WithBacking(b.V))))
		vb := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(b.M), gorgonia.WithName("VB"),
			gorgonia.WithValue(tensor.New(tensor.WithShape(b.M), tensor.WithBacking(b.VB))))
		fill := func(n int, val float32) []float32 {
			s := alignedFloats(n)
			for i := range s {
				s[i] = val
			}
			return s
		}
		lo := gorgonia.NewConstant(tensor.New(tensor.WithShape(mh), tensor.WithBacking(fill(mh, -3))), gorgonia.WithName("lo"))
		hi := gorgonia.NewConstant(tensor.New(tensor.WithShape(mh), tensor.WithBacking(fill(mh, 3))), gorgonia.WithName("hi"))
		var err error
		must := func(n *gorgonia.Node, e error) *gorgonia.Node {
			if e != nil && err == nil {
				err = e
			}
			return n
		}
		pre := must(gorgonia.Mul(u, xa))
		if err != nil {
			return fmt.Errorf("bandit: building network graph: %w", err)
		}
		hid := must(gorgonia.MinBetween(must(gorgonia.MaxBetween(pre, lo)), hi))
		z := must(gorgonia.Tanh(hid))
		if err != nil {
			return fmt.Errorf("bandit: building network graph: %w", err)
		}
		zm := must(gorgonia.Reshape(z, tensor.Shape{b.M, b.H}))
		if err != nil {
			return fmt.Errorf("bandit: building network graph: %w", err)
		}
		raw := must(gorgonia.Add(must(gorgonia.Sum(must(gorgonia.HadamardProd(v, zm)), 1)), vb))
		if err != nil {
			return fmt.Errorf("bandit: building network graph: %w", err)
		}
		b.out.hid, b.out.z, b.out.raw = hid, z, raw
	}
	b.fwd = g
	b.vm = gorgonia.NewTapeMachine(g)
	b.run = tape.New(b.vm)
	return nil
}

// forward computes (or reuses) the raw outputs of all regressors for x.
func (b *bank) forward(x []float32) error {
	if b.fresh && slices.Equal(x, b.xa[:b.D]) {
		return nil
	}
	copy(b.xa, x)
	for i, v := range b.xa {
		b.x2[i] = v * v
		b.ax[i] = float32(math.Abs(float64(v)))
	}
	b.vm.Reset()
	if err := b.run.Run(); err != nil {
		b.fresh = false
		return fmt.Errorf("bandit: forward pass: %w", err)
	}
	if b.H > 0 {
		copy(b.hid, b.out.hid.Value().Data().([]float32))
		copy(b.z, b.out.z.Value().Data().([]float32))
	}
	copy(b.raw, b.out.raw.Value().Data().([]float32))
	b.fresh = true
	return nil
}

// predictOne recomputes regressor r's raw output for the cached input in
// plain Go (used after r alone was updated).
func (b *bank) predictOne(r int) float64 {
	d1 := b.D + 1
	if b.H == 0 {
		return float64(dot(b.U[r*d1:(r+1)*d1], b.xa))
	}
	out := float64(b.VB[r])
	for j := 0; j < b.H; j++ {
		row := (r*b.H + j) * d1
		p := min(max(dot(b.U[row:row+d1], b.xa), -3), 3)
		out += float64(b.V[r*b.H+j]) * math.Tanh(float64(p))
	}
	return out
}

func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// prepare updates regressor r's feature scales for the cached input and
// fills the scratch invN with x/N; it returns Σ x²/N².
func (b *bank) prepare(r int) float64 {
	d1 := b.D + 1
	n := b.NU[r*d1 : (r+1)*d1]
	ninv := b.nuInv[r*d1 : (r+1)*d1]
	ax, xa, xin := b.ax[:d1], b.xa[:d1], b.invN[:d1]
	rows := 1
	if b.H > 0 {
		rows = b.H
	}
	var normx float32
	for i := range n {
		if ax[i] > n[i] {
			if n[i] > 0 {
				f := n[i] / ax[i]
				for j := 0; j < rows; j++ {
					b.U[(r*rows+j)*d1+i] *= f
				}
			}
			n[i] = ax[i]
			ninv[i] = 1 / ax[i]
		}
		v := xa[i] * ninv[i]
		xin[i] = v
		normx += v * v
	}
	return float64(normx)
}

// learn updates regressors rows[i] towards labels[i] with importance weights
// wts[i], using the forward values cached for the input last passed to
// forward (which the caller must have called with the current weights). The
// label range of st is widened by each label before its update.
func (b *bank) learn(st *gdState, rows []int, labels, wts []float64) {
	d1 := b.D + 1
	for k, r := range rows {
		y, wt := labels[k], wts[k]
		st.widen(y)
		yhat := st.clip(float64(b.raw[r]))
		if yhat == y || wt == 0 {
			continue
		}
		normx := b.prepare(r)
		if b.H == 0 {
			w := b.U[r*d1 : (r+1)*d1]
			st.update(w, b.GU[r*d1:(r+1)*d1], b.xa, b.x2, b.invN, b.xr, normx, yhat, y, wt)
			continue
		}
		h, h1 := b.H, b.H+1
		// Output layer on [z, 1].
		copy(b.feat, b.z[r*h:(r+1)*h])
		b.feat[h] = 1
		nv := b.NV[r*h1 : (r+1)*h1]
		v := b.vtmp
		copy(v, b.V[r*h:(r+1)*h])
		v[h] = b.VB[r]
		fnorm := 0.0
		for j, f := range b.feat {
			af := float32(math.Abs(float64(f)))
			if af > nv[j] {
				if nv[j] > 0 {
					v[j] *= nv[j] / af
				}
				nv[j] = af
			}
			if f == 0 {
				b.f2[j], b.finv[j] = 0, 0
				continue
			}
			b.f2[j] = f * f
			b.finv[j] = f / nv[j]
			fnorm += float64(b.finv[j] * b.finv[j])
		}
		st.update(v, b.GV[r*h1:(r+1)*h1], b.feat, b.f2, b.finv, b.xr, fnorm, yhat, y, wt)
		copy(b.V[r*h:(r+1)*h], v[:h])
		b.VB[r] = v[h]
		// Hidden units: regress h_j towards clamp(h_j − ν(ŷ−y)(1−z_j²), −3, 3).
		diff := yhat - y
		for j := 0; j < h; j++ {
			hj := float64(b.hid[r*h+j])
			zj := float64(b.z[r*h+j])
			t := min(max(hj-float64(v[j])*diff*(1-zj*zj), -3), 3)
			if t == hj {
				continue
			}
			row := (r*h + j) * d1
			st.update(b.U[row:row+d1], b.GU[row:row+d1], b.xa, b.x2, b.invN, b.xr, normx, hj, t, wt)
		}
	}
	b.fresh = false
}

// bankState is the serialised form of a bank's learned numbers.
type bankState struct {
	M, D, H                  int
	U, GU, NU, V, VB, GV, NV []float32
}

func (b *bank) state() bankState {
	return bankState{b.M, b.D, b.H, b.U, b.GU, b.NU, b.V, b.VB, b.GV, b.NV}
}

// setState copies s into b (shapes must match).
func (b *bank) setState(s bankState) error {
	if s.M != b.M || s.D != b.D || s.H != b.H || len(s.U) != len(b.U) || len(s.GU) != len(b.GU) ||
		len(s.NU) != len(b.NU) || len(s.V) != len(b.V) || len(s.VB) != len(b.VB) || len(s.GV) != len(b.GV) || len(s.NV) != len(b.NV) {
		return fmt.Errorf("regressor shape M=%d D=%d H=%d in state, want M=%d D=%d H=%d", s.M, s.D, s.H, b.M, b.D, b.H)
	}
	copy(b.U, s.U)
	copy(b.GU, s.GU)
	copy(b.NU, s.NU)
	for i, v := range b.NU {
		b.nuInv[i] = 0
		if v > 0 {
			b.nuInv[i] = 1 / v
		}
	}
	copy(b.V, s.V)
	copy(b.VB, s.VB)
	copy(b.GV, s.GV)
	copy(b.NV, s.NV)
	b.fresh = false
	return nil
}

// alignedFloats returns n zeroed float32 whose first lies on a 16-byte
// boundary. gonum's SSE dot product and sum, behind gorgonia's Mul, add
// the elements before the first aligned one apart, so a dot product's
// rounding depends on where its operands lie in memory; Go's allocator
// puts objects of its 8- and 24-byte size classes, and tiny ones (under
// 16 bytes), at 4- or 8-byte offsets that depend on what the process
// allocated before, which made the same run learn different low bits in
// two processes (a 5-d context: 6 inputs with the bias, 24 bytes). A
// capacity rounded up to a multiple of 16 bytes, at least 16, puts the
// slice in a size class whose objects are all 16-byte aligned.
func alignedFloats(n int) []float32 { return make([]float32, n, max(4, (n+3)&^3)) }
