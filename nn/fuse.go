package nn

import (
	"fmt"
	"math"
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// Fused element-wise chains. Exporters write GELU as Div, Erf, Add, Mul,
// Mul (or, with the tanh approximation, eight nodes), SiLU as Sigmoid and
// Mul, Mish as Softplus, Tanh and Mul, HardSwish before opset 14 as
// HardSigmoid and Mul. Run node by node, each pass reads and writes a
// tensor-sized buffer. Instead, the first element-wise node of such a
// chain compiles the whole chain into one op, which runs it block by block
// (ewBlock values, in the cores' L1 caches): each node becomes one loop over
// the block (an ewFunc), its operands the block of a run-time input of the
// chain, of an earlier node's result, or of a scalar constant.
//
// A chain is the nodes after the first one, in order, whose operator has an
// ewFunc (the chain field of its operator table entry) and whose operands
// are values of the chain, run-time values of the chain's shape computed
// before it, or scalar constants; every value it computes but its result
// must be used inside the chain only.

// ewBlock is the number of values a fused chain computes at a time.
const ewBlock = 256

// ewFunc computes one node of a chain over a block: dst[i] from args[k][i]
// (all of len(dst) values).
type ewFunc func(dst []float32, args [][]float32)

// chainFunc is the chain entry of an element-wise operator: its ewFunc
// and how many of its inputs are operands (the others, if any, must be
// constants, which it reads from ins like act does).
type chainFunc func(b *builder, a *attrs, ins []*value) (f ewFunc, arity int)

// The ewFuncs of the element-wise operators.

func ewUnary(f func(float32) float32) chainFunc {
	return func(*builder, *attrs, []*value) (ewFunc, int) {
		return func(dst []float32, args [][]float32) {
			x := args[0][:len(dst)]
			for i, v := range x {
				dst[i] = f(v)
			}
		}, 1
	}
}

func ewBinary(f func(x, y float32) float32) chainFunc {
	return func(*builder, *attrs, []*value) (ewFunc, int) {
		return func(dst []float32, args [][]float32) {
			x, y := args[0][:len(dst)], args[1][:len(dst)]
			for i := range dst {
				dst[i] = f(x[i], y[i])
			}
		}, 2
	}
}

// Direct loops for the operators of GELU, SiLU and the like (no call
// through a function value per element).

func ewAdd(*builder, *attrs, []*value) (ewFunc, int) {
	return func(dst []float32, args [][]float32) {
		x, y := args[0][:len(dst)], args[1][:len(dst)]
		for i := range dst {
			dst[i] = x[i] + y[i]
		}
	}, 2
}

func ewSub(*builder, *attrs, []*value) (ewFunc, int) {
	return func(dst []float32, args [][]float32) {
		x, y := args[0][:len(dst)], args[1][:len(dst)]
		for i := range dst {
			dst[i] = x[i] - y[i]
		}
	}, 2
}

func ewMul(*builder, *attrs, []*value) (ewFunc, int) {
	return func(dst []float32, args [][]float32) {
		x, y := args[0][:len(dst)], args[1][:len(dst)]
		for i := range dst {
			dst[i] = x[i] * y[i]
		}
	}, 2
}

func ewDiv(*builder, *attrs, []*value) (ewFunc, int) {
	return func(dst []float32, args [][]float32) {
		x, y := args[0][:len(dst)], args[1][:len(dst)]
		for i := range dst {
			dst[i] = x[i] / y[i]
		}
	}, 2
}

// ewAct is the chain entry of an activation with an act function (Relu,
// LeakyRelu, Clip): its parameters read once, as for a convolution
// epilogue.
func ewAct(act func(b *builder, a *attrs, ins []*value) kernels.Activation) chainFunc {
	return func(b *builder, a *attrs, ins []*value) (ewFunc, int) {
		ac := act(b, a, ins)
		return func(dst []float32, args [][]float32) {
			copy(dst, args[0])
			ac.Apply(dst)
		}, 1
	}
}

func ewHardSigmoid(b *builder, a *attrs, _ []*value) (ewFunc, int) {
	alpha, beta := a.float("alpha", 0.2), a.float("beta", 0.5)
	return func(dst []float32, args [][]float32) {
		x := args[0][:len(dst)]
		for i, v := range x {
			dst[i] = max(0, min(1, alpha*v+beta))
		}
	}, 1
}

// fuseChain compiles the chain starting at the node being built, an
// element-wise node, if there is one of at least two nodes: it returns the
// chain's op and the name of its result.
func (b *builder) fuseChain() (v *value, result string, ok bool) {
	p := b.p
	// Registers: run-time inputs of the chain, scalar constants, results
	// of its nodes.
	const (
		regInput = iota
		regConst
		regTemp
	)
	type reg struct {
		kind int
		k    int     // input or temp number
		c    float32 // constant
	}
	type step struct {
		node int
		f    ewFunc
		args []int // registers
		dst  int
	}
	var (
		regs    []reg
		inputs  []*value
		byName  = map[string]int{} // value → register
		steps   []step
		shape   []int
		members = map[int]bool{}
		nTemp   int
	)
	// operand returns the register of a node's input, or -1.
	m := b.pattern()
	operand := func(name string) int {
		if r, ok := byName[name]; ok {
			return r
		}
		if v, ok := b.env[name]; ok && v.c == nil {
			if shape != nil && !slices.Equal(v.shape, shape) {
				return -1
			}
			shape = v.shape
			inputs = append(inputs, v)
			regs = append(regs, reg{kind: regInput, k: len(inputs) - 1})
			byName[name] = len(regs) - 1
			return len(regs) - 1
		}
		if c := m.constant(name); c != nil && !c.isInt && len(c.f) == 1 {
			regs = append(regs, reg{kind: regConst, c: c.f[0]})
			byName[name] = len(regs) - 1
			return len(regs) - 1
		}
		return -1
	}
	// add compiles node j into a step, if it belongs to the chain.
	add := func(j int) bool {
		n := &p.nodes[j]
		def, ok := opTable[n.op]
		if !ok || def.chain == nil || b.skip[j] || len(n.outputs) != 1 || (n.domain != "" && n.domain != "ai.onnx") {
			return false
		}
		var f ewFunc
		var arity int
		okf := attempt(func() {
			ins := make([]*value, len(n.inputs))
			for k, name := range n.inputs {
				if c := m.constant(name); c != nil {
					ins[k] = constVal(c)
				}
			}
			a := newAttrs(n)
			f, arity = def.chain(b, a, ins)
			a.checkUnused()
		})
		if !okf || len(n.inputs) < arity {
			return false
		}
		// Operands; the other inputs must be constants (read above).
		saved := len(regs)
		savedIn := len(inputs)
		savedShape := shape
		var args []int
		rollback := func() bool {
			for name, r := range byName {
				if r >= saved {
					delete(byName, name)
				}
			}
			regs, inputs, shape = regs[:saved], inputs[:savedIn], savedShape
			return false
		}
		for k, name := range n.inputs {
			if k >= arity {
				if name != "" && m.constant(name) == nil {
					return rollback()
				}
				continue
			}
			r := operand(name)
			if r < 0 {
				return rollback()
			}
			args = append(args, r)
		}
		if shape == nil { // constants only: folded, not a chain
			return rollback()
		}
		regs = append(regs, reg{kind: regTemp, k: nTemp})
		nTemp++
		byName[n.outputs[0]] = len(regs) - 1
		steps = append(steps, step{node: j, f: f, args: args, dst: len(regs) - 1})
		members[j] = true
		return true
	}
	if !add(b.idx) {
		return nil, "", false
	}
	// Grow along the uses of the chain's values, in node order.
	for {
		next := -1
		for name, r := range byName {
			if regs[r].kind != regTemp {
				continue
			}
			for _, c := range p.consumers[name] {
				if c > b.idx && !members[c] && (next < 0 || c < next) && !rejected(c, members) {
					next = c
				}
			}
		}
		if next < 0 || !add(next) {
			if next < 0 {
				break
			}
			members[next] = false // tried: not part of the chain
			continue
		}
	}
	// Keep the longest prefix whose values, but one, are used inside it.
	escapes := func(upto int) []string {
		in := map[int]bool{}
		for _, s := range steps[:upto] {
			in[s.node] = true
		}
		var out []string
		for _, s := range steps[:upto] {
			name := p.nodes[s.node].outputs[0]
			if p.isOutput[name] {
				out = append(out, name)
				continue
			}
			for _, c := range p.consumers[name] {
				if !in[c] {
					out = append(out, name)
					break
				}
			}
		}
		return out
	}
	for len(steps) >= 2 {
		if e := escapes(len(steps)); len(e) == 1 && e[0] == p.nodes[steps[len(steps)-1].node].outputs[0] {
			break
		}
		steps = steps[:len(steps)-1]
	}
	if len(steps) < 2 {
		return nil, "", false
	}
	for _, s := range steps[1:] {
		b.skip[s.node] = true
	}
	last := steps[len(steps)-1]
	result = p.nodes[last.node].outputs[0]
	// A chain of one input computing a known activation (whatever the
	// order of its nodes) runs as that activation's loop.
	known := ""
	if len(inputs) == 1 {
		probe := func(x []float32) []float32 {
			vals := make([][]float32, len(regs))
			for r, g := range regs {
				switch g.kind {
				case regInput:
					vals[r] = x
				case regConst:
					vals[r] = slices.Repeat([]float32{g.c}, len(x))
				}
			}
			for _, s := range steps {
				args := make([][]float32, len(s.args))
				for k, r := range s.args {
					args[k] = vals[r]
				}
				vals[s.dst] = make([]float32, len(x))
				s.f(vals[s.dst], args)
			}
			return vals[last.dst]
		}
		if name, f := knownActivation(probe); f != nil {
			in := slices.Index(regs, reg{kind: regInput})
			steps = []step{{node: last.node, f: f, args: []int{in}, dst: last.dst}}
			known = name
		}
	}
	// Registers used by the kept steps: inputs may have been added by
	// dropped ones; they stay in the op's inputs (harmless).
	consts := make([][]float32, len(regs))
	for r, g := range regs {
		if g.kind == regConst {
			consts[r] = slices.Repeat([]float32{g.c}, ewBlock)
		}
	}
	total := numel(shape)
	workers := max(1, kernels.Threads())
	scratch := make([][]float32, workers)
	for w := range scratch {
		scratch[w] = make([]float32, nTemp*ewBlock)
	}
	argBufs := make([][][]float32, workers)
	for w := range argBufs {
		argBufs[w] = make([][]float32, 4)
	}
	v = b.emit(shape, inputs, func(out []float32, ins [][]float32) {
		run := func(w, i0, i1 int) {
			sc := scratch[w]
			for o := i0; o < i1; o += ewBlock {
				n := min(ewBlock, i1-o)
				block := func(r int) []float32 {
					switch g := regs[r]; g.kind {
					case regInput:
						return ins[g.k][o : o+n]
					case regConst:
						return consts[r][:n]
					default:
						return sc[g.k*ewBlock : g.k*ewBlock+n]
					}
				}
				for k, s := range steps {
					args := argBufs[w][:0]
					for _, r := range s.args {
						args = append(args, block(r))
					}
					argBufs[w] = args
					dst := block(s.dst)
					if k == len(steps)-1 {
						dst = out[o : o+n]
					}
					s.f(dst, args)
				}
			}
		}
		if total < 1<<15 || workers == 1 {
			run(0, 0, total)
			return
		}
		// Split into workers chunks of whole blocks.
		chunk := (total + workers - 1) / workers
		chunk = (chunk + ewBlock - 1) / ewBlock * ewBlock
		kernels.ParallelFor(workers, workers, func(w0, w1 int) {
			for w := w0; w < w1; w++ {
				run(w, min(w*chunk, total), min((w+1)*chunk, total))
			}
		})
	})
	if known != "" && v.op != nil {
		v.op.label = fmt.Sprintf("%s(%s)", known, b.node().name)
	}
	return v, result, true
}

// rejected reports whether node c was tried and found not to belong to the
// chain (members[c] set to false).
func rejected(c int, members map[int]bool) bool {
	v, tried := members[c]
	return tried && !v
}

// knownActivations are the activations whose fused chains run as one loop
// of package kernels: the function and its loop.
var knownActivations = []struct {
	name string
	f    func(x float64) float64
	loop func(dst, src []float32)
}{
	{"GELU", func(x float64) float64 { return 0.5 * x * (1 + math.Erf(x/math.Sqrt2)) }, kernels.GELU},
	{"GELUTanh", func(x float64) float64 { return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x))) }, kernels.GELUTanh},
	{"SiLU", func(x float64) float64 { return x / (1 + math.Exp(-x)) }, kernels.SiLU},
}

// activationProbes are the points at which a chain is compared with the
// known activations: every 1/16 over [−8, 8] and a few far out.
var activationProbes = func() []float32 {
	p := []float32{-1000, -60, -20, 20, 60, 1000}
	for k := -128; k <= 128; k++ {
		p = append(p, float32(k)/16)
	}
	return p
}()

// knownActivation returns the name and loop of the known activation that
// probe (a chain of one input, run on a slice) computes, or nil.
func knownActivation(probe func([]float32) []float32) (string, ewFunc) {
	got := probe(activationProbes)
	for _, a := range knownActivations {
		match := true
		for k, x := range activationProbes {
			want := a.f(float64(x))
			if d := math.Abs(float64(got[k]) - want); !(d <= 1e-5*(1+math.Abs(want))) {
				match = false
				break
			}
		}
		if match {
			loop := a.loop
			return a.name, func(dst []float32, args [][]float32) { loop(dst, args[0]) }
		}
	}
	return "", nil
}
