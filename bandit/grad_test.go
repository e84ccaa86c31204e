package bandit

import (
	"math/rand/v2"
	"testing"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// TestUpdateFollowsGorgoniaGradient checks the hand-applied network update
// against Gorgonia's symbolic gradient of the squared loss: every weight
// the update moves must move against its gradient (VW's per-weight rule
// only rescales each coordinate by a positive factor), and weights with a
// zero gradient must not move.
func TestUpdateFollowsGorgoniaGradient(t *testing.T) {
	const d, h = 3, 4
	rng := rand.New(rand.NewPCG(21, 21))
	b, err := newBank(1, d, h, rng)
	if err != nil {
		t.Fatal(err)
	}
	for i := range b.U {
		b.U[i] = float32(rng.Float64()-0.5) * 0.5
	}
	for i := range b.V {
		b.V[i] = float32(rng.Float64() - 0.5)
	}
	x := []float32{0.5, -1, 0} // x[2] = 0: its weights have zero gradient
	y := 2.0

	// Gorgonia: loss = (V·tanh(U·[x,1]) + vb − y)².
	g := gorgonia.NewGraph()
	xa := append(append([]float32(nil), x...), 1)
	xn := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(d+1), gorgonia.WithName("x"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(d+1), tensor.WithBacking(xa))))
	un := gorgonia.NewMatrix(g, tensor.Float32, gorgonia.WithShape(h, d+1), gorgonia.WithName("U"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(h, d+1), tensor.WithBacking(append([]float32(nil), b.U...)))))
	vn := gorgonia.NewVector(g, tensor.Float32, gorgonia.WithShape(h), gorgonia.WithName("V"),
		gorgonia.WithValue(tensor.New(tensor.WithShape(h), tensor.WithBacking(append([]float32(nil), b.V...)))))
	bn := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("vb"), gorgonia.WithValue(b.VB[0]))
	yn := gorgonia.NewScalar(g, tensor.Float32, gorgonia.WithName("y"), gorgonia.WithValue(float32(y)))
	pre := gorgonia.Must(gorgonia.Mul(un, xn))
	z := gorgonia.Must(gorgonia.Tanh(pre))
	out := gorgonia.Must(gorgonia.Add(gorgonia.Must(gorgonia.Mul(vn, z)), bn))
	loss := gorgonia.Must(gorgonia.Square(gorgonia.Must(gorgonia.Sub(out, yn))))
	grads, err := gorgonia.Grad(loss, un, vn)
	if err != nil {
		t.Fatal(err)
	}
	vm := gorgonia.NewTapeMachine(g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		t.Fatal(err)
	}
	gU := grads[0].Value().Data().([]float32)
	gV := grads[1].Value().Data().([]float32)

	// The bank's update, with a small learning rate and a label range that
	// does not clip.
	if err := b.forward(x); err != nil {
		t.Fatal(err)
	}
	if got, want := b.raw[0], out.Value().Data().(float32); got-want > 1e-5 || want-got > 1e-5 {
		t.Fatalf("forward %v, Gorgonia %v", got, want)
	}
	u0 := append([]float32(nil), b.U...)
	v0 := append([]float32(nil), b.V...)
	st := &gdState{Eta: 1e-3, Lo: -10, Hi: 10}
	b.learn(st, []int{0}, []float64{y}, []float64{1})
	check := func(name string, before, after, grad []float32) {
		for i := range grad {
			delta := after[i] - before[i]
			switch {
			case grad[i] == 0 && delta != 0:
				t.Errorf("%s[%d] moved by %v with zero gradient", name, i, delta)
			case grad[i] != 0 && delta*grad[i] >= 0:
				t.Errorf("%s[%d] moved by %v, gradient %v: not a descent step", name, i, delta, grad[i])
			}
		}
	}
	check("V", v0, b.V, gV)
	check("U", u0, b.U, gU)
}
