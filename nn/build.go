package nn

import (
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"

	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/amt-dev/amt/nn/kernels"
)

// value is what a name in the graph holds while a graph is built: a
// constant known at load time, or a runtime Gorgonia node. shape is the
// logical ONNX shape; aliases (Reshape, Flatten, Squeeze, …) share the node
// of their input under another shape.
type value struct {
	c     *tens
	n     *gorgonia.Node
	op    *gop // producer of n (nil for a graph input)
	shape []int
}

func constVal(t *tens) *value { return &value{c: t, shape: t.shape} }

// builder builds the graph of a program for one batch size.
type builder struct {
	p      *program
	batch  int
	g      *gorgonia.ExprGraph
	env    map[string]*value
	skip   map[int]bool
	nextID int
	idx    int // current node
	// separable: every node compiled so far computes each image from that
	// image alone (see perImage).
	separable bool
}

// buildError is the panic value used inside the builder; it is turned into
// an error naming the node.
type buildError struct{ err error }

func fail(format string, args ...any) {
	panic(buildError{fmt.Errorf(format, args...)})
}

func (p *program) build(batch int) (*instance, error) {
	b := &builder{p: p, batch: batch, g: gorgonia.NewGraph(), env: map[string]*value{}, skip: map[int]bool{}, separable: true}
	for name, c := range p.consts {
		b.env[name] = constVal(c)
	}
	inst := &instance{p: p, g: b.g}
	for _, in := range p.inputs {
		shape := slices.Clone(in.Shape)
		if shape[0] < 0 {
			shape[0] = batch
		}
		if shape[0] < 0 {
			return nil, fmt.Errorf("internal: no batch size for input %q", in.Name)
		}
		n := gorgonia.NewTensor(b.g, tensor.Float32, len(shape), gorgonia.WithShape(shape...), gorgonia.WithName(in.Name))
		b.env[in.Name] = &value{n: n, shape: shape}
		inst.inputs = append(inst.inputs, n)
	}
	for i := range p.nodes {
		if b.skip[i] {
			continue
		}
		b.idx = i
		if err := b.compileNode(i); err != nil {
			return nil, err
		}
	}
	for k, out := range p.outputs {
		v, ok := b.env[out.Name]
		if !ok {
			return nil, fmt.Errorf("graph output %q is not produced by any node", out.Name)
		}
		if v.c != nil && v.c.isInt {
			return nil, fmt.Errorf("graph output %q is an integer tensor; only float32 outputs are supported", out.Name)
		}
		if out.Shape == nil {
			s := slices.Clone(v.shape)
			if p.dynamic && len(s) > 0 && s[0] == batch {
				s[0] = -1
			}
			p.outputs[k].Shape = s
		}
		inst.outputs = append(inst.outputs, v)
		if v.c != nil || len(v.shape) == 0 || v.shape[0] != batch {
			b.separable = false
		}
	}
	inst.separable = b.separable && batch > 1
	for _, in := range p.inputs {
		if in.Shape[0] >= 0 {
			inst.separable = false
		}
	}
	keep := map[*gop]bool{}
	for _, v := range inst.outputs {
		if v.op != nil {
			keep[v.op] = true
		}
	}
	if err := planMemory(b.g, keep); err != nil {
		return nil, fmt.Errorf("memory plan: %w", err)
	}
	inst.vm = gorgonia.NewTapeMachine(b.g)
	return inst, nil
}

func (b *builder) compileNode(i int) (err error) {
	n := &b.p.nodes[i]
	defer func() {
		if r := recover(); r != nil {
			if be, ok := r.(buildError); ok {
				err = fmt.Errorf("node %q (%s, opset %d): %w", n.name, n.op, b.p.opset, be.err)
				return
			}
			err = fmt.Errorf("node %q (%s, opset %d): internal error: %v", n.name, n.op, b.p.opset, r)
		}
	}()
	ins := make([]*value, len(n.inputs))
	for k, name := range n.inputs {
		if name == "" {
			continue
		}
		v, ok := b.env[name]
		if !ok {
			fail("input %q is not produced by an earlier node, an initializer or a graph input", name)
		}
		ins[k] = v
	}
	a := newAttrs(n)
	outs := b.dispatch(n, a, ins)
	a.checkUnused()
	if b.separable && !b.perImage(n, ins, outs) {
		b.separable = false
	}
	for k, name := range n.outputs {
		if name == "" {
			continue
		}
		if k >= len(outs) || outs[k] == nil {
			if len(b.p.consumers[name]) > 0 || b.p.isOutput[name] {
				fail("output %d (%q) is not supported", k, name)
			}
			continue
		}
		b.env[name] = outs[k]
	}
	return nil
}

// attrs gives typed access to a node's attributes and records which were
// read, so that an attribute the engine does not implement is an error.
type attrs struct {
	n    *onode
	used map[string]bool
}

func newAttrs(n *onode) *attrs { return &attrs{n: n, used: map[string]bool{}} }

func (a *attrs) has(name string) bool { _, ok := a.n.attrs[name]; return ok }

func (a *attrs) get(name string) (any, bool) {
	v, ok := a.n.attrs[name]
	a.used[name] = true
	return v, ok
}

func (a *attrs) int(name string, def int64) int64 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.(int64)
	if !ok {
		fail("attribute %q is %T, want an int", name, v)
	}
	return x
}

func (a *attrs) ints(name string, def []int64) []int64 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.([]int64)
	if !ok {
		fail("attribute %q is %T, want ints", name, v)
	}
	return x
}

func (a *attrs) float(name string, def float32) float32 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.(float32)
	if !ok {
		fail("attribute %q is %T, want a float", name, v)
	}
	return x
}

func (a *attrs) floats(name string, def []float32) []float32 {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.([]float32)
	if !ok {
		fail("attribute %q is %T, want floats", name, v)
	}
	return x
}

func (a *attrs) str(name, def string) string {
	v, ok := a.get(name)
	if !ok {
		return def
	}
	x, ok := v.(string)
	if !ok {
		fail("attribute %q is %T, want a string", name, v)
	}
	return x
}

func (a *attrs) tensor(name string) (*tens, bool) {
	v, ok := a.get(name)
	if !ok {
		return nil, false
	}
	if dims, ok := a.n.emptyAttrs[name]; ok {
		return emptyTens(dims), true
	}
	t, ok := v.(tensor.Tensor)
	if !ok {
		fail("attribute %q is %T, want a tensor", name, v)
	}
	c, err := fromTensor(t)
	if err != nil {
		fail("attribute %q: %v", name, err)
	}
	return c, true
}

// ignore marks attributes that do not affect inference.
func (a *attrs) ignore(names ...string) {
	for _, n := range names {
		a.used[n] = true
	}
}

func (a *attrs) checkUnused() {
	var bad []string
	for name := range a.n.attrs {
		if !a.used[name] {
			bad = append(bad, name)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		fail("unsupported attribute %q", bad[0])
	}
}

// emit creates the runtime op computing fn, or folds it when all inputs
// are constants. ins may hold nil for omitted optional inputs.
func (b *builder) emit(shape []int, ins []*value, fn func(out []float32, ins [][]float32)) *value {
	n := &b.p.nodes[b.idx]
	allConst := true
	for _, v := range ins {
		if v != nil && v.c == nil {
			allConst = false
		}
	}
	if allConst {
		data := make([]float32, numel(shape))
		cins := make([][]float32, len(ins))
		for k, v := range ins {
			if v != nil {
				cins[k] = v.c.floats()
			}
		}
		fn(data, cins)
		return constVal(&tens{shape: shape, f: data})
	}
	b.nextID++
	o := &gop{id: b.nextID, label: fmt.Sprintf("%s(%s)", n.op, n.name), fn: fn}
	o.slots = make([][]float32, len(ins))
	o.isRT = make([]bool, len(ins))
	o.ins = make([][]float32, len(ins))
	var children []*gorgonia.Node
	for k, v := range ins {
		switch {
		case v == nil:
		case v.c != nil:
			o.slots[k] = v.c.floats()
		default:
			o.isRT[k] = true
			children = append(children, v.n)
			o.inDims = append(o.inDims, v.n.Dims())
			o.srcs = append(o.srcs, v.op)
		}
	}
	gs := shape
	if len(gs) == 0 {
		gs = []int{1}
	}
	o.outShape = tensor.Shape(slices.Clone(gs)) // buffers: see planMemory
	node, err := gorgonia.ApplyOp(o, children...)
	if err != nil {
		fail("gorgonia: %v", err)
	}
	return &value{n: node, op: o, shape: shape}
}

// alias returns v under another shape with the same data.
func alias(v *value, shape []int) *value {
	if numel(shape) != numel(v.shape) {
		fail("internal: alias %v as %v", v.shape, shape)
	}
	if v.c != nil {
		return constVal(v.c.withShape(shape))
	}
	return &value{n: v.n, op: v.op, shape: shape}
}

// need returns input k, failing when it is missing.
func need(ins []*value, k int, what string) *value {
	if k >= len(ins) || ins[k] == nil {
		fail("missing input %d (%s)", k, what)
	}
	return ins[k]
}

// opt returns input k or nil.
func opt(ins []*value, k int) *value {
	if k >= len(ins) {
		return nil
	}
	return ins[k]
}

// constant returns input k, which must be known at load time.
func constant(ins []*value, k int, what string) *tens {
	v := need(ins, k, what)
	if v.c == nil {
		fail("input %d (%s) must be a constant (an initializer or computable at load time)", k, what)
	}
	return v.c
}

func (b *builder) dispatch(n *onode, a *attrs, ins []*value) []*value {
	one := func(v *value) []*value { return []*value{v} }
	switch n.op {
	case "Identity":
		return one(need(ins, 0, "input"))
	case "Dropout":
		a.ignore("ratio", "seed", "is_test")
		if b.p.opset < 7 && a.int("is_test", 1) == 0 {
			fail("training mode (is_test=0) is not supported")
		}
		if t := opt(ins, 2); t != nil && (t.c == nil || t.c.ints()[0] != 0) {
			fail("training_mode must be a constant false")
		}
		return one(need(ins, 0, "data"))
	case "Constant":
		return one(b.constantOp(a))
	case "Shape":
		x := need(ins, 0, "data")
		r := len(x.shape)
		start, end := int(a.int("start", 0)), int(a.int("end", int64(r)))
		if start < 0 {
			start += r
		}
		if end < 0 {
			end += r
		}
		start, end = max(0, min(start, r)), max(0, min(end, r))
		var s []int64
		for _, d := range x.shape[start:max(start, end)] {
			s = append(s, int64(d))
		}
		return one(constVal(&tens{shape: []int{len(s)}, i: s, isInt: true}))
	case "Cast":
		return one(b.cast(a, need(ins, 0, "input")))
	case "ConstantOfShape":
		s := constant(ins, 0, "shape").ints()
		shape := make([]int, len(s))
		for k, d := range s {
			if d < 0 {
				fail("negative dimension in shape %v", s)
			}
			shape[k] = int(d)
		}
		t := &tens{shape: shape, f: make([]float32, numel(shape))}
		if v, ok := a.tensor("value"); ok {
			if v.isInt {
				t = &tens{shape: shape, i: make([]int64, numel(shape)), isInt: true}
				for k := range t.i {
					t.i[k] = v.i[0]
				}
			} else {
				for k := range t.f {
					t.f[k] = v.f[0]
				}
			}
		}
		return one(constVal(t))
	case "Range":
		st, li, de := constant(ins, 0, "start"), constant(ins, 1, "limit"), constant(ins, 2, "delta")
		if st.isInt {
			s, l, d := st.ints()[0], li.ints()[0], de.ints()[0]
			if d == 0 {
				fail("delta is 0")
			}
			var out []int64
			for x := s; (d > 0 && x < l) || (d < 0 && x > l); x += d {
				out = append(out, x)
			}
			return one(constVal(&tens{shape: []int{len(out)}, i: out, isInt: true}))
		}
		s, l, d := st.floats()[0], li.floats()[0], de.floats()[0]
		if d == 0 {
			fail("delta is 0")
		}
		cnt := max(0, int(math.Ceil(float64((l-s)/d))))
		out := make([]float32, cnt)
		for k := range out {
			out[k] = s + float32(k)*d
		}
		return one(constVal(&tens{shape: []int{cnt}, f: out}))
	case "Add", "Sub", "Mul", "Div", "Pow":
		if b.p.opset < 7 {
			fail("opset %d broadcasting rules (before opset 7) are not supported", b.p.opset)
		}
		return one(b.binaryOp(n.op, need(ins, 0, "A"), need(ins, 1, "B")))
	case "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Floor", "Ceil", "Reciprocal":
		return one(b.unaryOp(n.op, need(ins, 0, "X"), unaryFunc(n.op)))
	case "LeakyRelu":
		alpha := a.float("alpha", 0.01)
		return one(b.unaryOp(n.op, need(ins, 0, "X"), func(x float32) float32 {
			if x < 0 {
				return alpha * x
			}
			return x
		}))
	case "Elu":
		alpha := a.float("alpha", 1)
		return one(b.unaryOp(n.op, need(ins, 0, "X"), func(x float32) float32 {
			if x < 0 {
				return alpha * float32(math.Expm1(float64(x)))
			}
			return x
		}))
	case "HardSigmoid":
		alpha, beta := a.float("alpha", 0.2), a.float("beta", 0.5)
		return one(b.unaryOp(n.op, need(ins, 0, "X"), func(x float32) float32 {
			return max(0, min(1, alpha*x+beta))
		}))
	case "Clip":
		lo, hi := b.clipBounds(a, ins)
		return one(b.unaryOp(n.op, need(ins, 0, "input"), func(x float32) float32 {
			if x < lo {
				return lo
			}
			if x > hi {
				return hi
			}
			return x
		}))
	case "Softmax":
		return one(b.softmax(a, need(ins, 0, "input")))
	case "Flatten":
		x := need(ins, 0, "input")
		ax := a.int("axis", 1)
		if ax < 0 {
			ax += int64(len(x.shape))
		}
		if ax < 0 || int(ax) > len(x.shape) {
			fail("axis %d out of range for shape %v", a.int("axis", 1), x.shape)
		}
		return one(alias(x, []int{numel(x.shape[:ax]), numel(x.shape[ax:])}))
	case "Reshape":
		x := need(ins, 0, "data")
		var target []int64
		if b.p.opset < 5 {
			target = a.ints("shape", nil)
		} else {
			target = constant(ins, 1, "shape").ints()
		}
		s, err := reshapeShape(x.shape, target, a.int("allowzero", 0) != 0)
		if err != nil {
			fail("%v", err)
		}
		return one(alias(x, s))
	case "Squeeze", "Unsqueeze":
		x := need(ins, 0, "data")
		var axes []int64
		if b.p.opset >= 13 {
			if t := opt(ins, 1); t != nil {
				axes = constant(ins, 1, "axes").ints()
			}
		} else {
			axes = a.ints("axes", nil)
		}
		var s []int
		var err error
		if n.op == "Squeeze" {
			s, err = squeezeShape(x.shape, axes)
		} else {
			if axes == nil {
				fail("axes are required")
			}
			s, err = unsqueezeShape(x.shape, axes)
		}
		if err != nil {
			fail("%v", err)
		}
		return one(alias(x, s))
	case "Transpose":
		return one(b.transposeOp(a, need(ins, 0, "data")))
	case "Concat":
		return one(b.concatOp(a, ins))
	case "Gather":
		return one(b.gatherOp(a, need(ins, 0, "data"), constant(ins, 1, "indices")))
	case "Slice":
		return one(b.sliceOp(a, ins))
	case "Split":
		return b.splitOp(a, ins, len(n.outputs))
	case "Pad":
		return one(b.padOp(a, ins))
	case "Expand":
		return one(b.expandOp(need(ins, 0, "input"), constant(ins, 1, "shape").ints()))
	case "Resize", "Upsample":
		return one(b.resizeOp(n.op, a, ins))
	case "Conv":
		return one(b.convOp(a, ins))
	case "BatchNormalization":
		return one(b.batchNorm(a, ins))
	case "MaxPool", "AveragePool":
		return one(b.poolOp(n.op, a, ins))
	case "GlobalAveragePool", "GlobalMaxPool":
		return one(b.globalPool(n.op, need(ins, 0, "X")))
	case "ReduceMean":
		return one(b.reduceMean(a, ins))
	case "Gemm":
		return one(b.gemmOp(a, ins))
	case "MatMul":
		return one(b.matmulOp(need(ins, 0, "A"), need(ins, 1, "B")))
	}
	fail("unsupported operator %s", n.op)
	return nil
}

func (b *builder) constantOp(a *attrs) *value {
	if a.has("sparse_value") {
		a.get("sparse_value")
		fail("attribute \"sparse_value\" is not supported")
	}
	if t, ok := a.tensor("value"); ok {
		return constVal(t)
	}
	if a.has("value_float") {
		return constVal(&tens{shape: []int{}, f: []float32{a.float("value_float", 0)}})
	}
	if a.has("value_floats") {
		f := a.floats("value_floats", nil)
		return constVal(&tens{shape: []int{len(f)}, f: f})
	}
	if a.has("value_int") {
		return constVal(&tens{shape: []int{}, i: []int64{a.int("value_int", 0)}, isInt: true})
	}
	if a.has("value_ints") {
		v := a.ints("value_ints", nil)
		return constVal(&tens{shape: []int{len(v)}, i: v, isInt: true})
	}
	fail("no value attribute")
	return nil
}

// ONNX TensorProto data types handled by Cast.
const (
	dtFloat = 1
	dtInt32 = 6
	dtInt64 = 7
	dtBool  = 9
	dtDbl   = 11
)

func (b *builder) cast(a *attrs, x *value) *value {
	to := a.int("to", 0)
	a.ignore("saturate")
	toFloat := to == dtFloat || to == dtDbl
	toInt := to == dtInt32 || to == dtInt64 || to == dtBool
	if !toFloat && !toInt {
		fail("attribute \"to\" = %d: only float, double, int32, int64 and bool are supported", to)
	}
	if x.c == nil {
		if !toFloat {
			fail("attribute \"to\" = %d: casting a runtime tensor to an integer type is not supported", to)
		}
		return x
	}
	if toFloat {
		return constVal(&tens{shape: x.shape, f: x.c.floats()})
	}
	v := x.c.ints()
	if to == dtBool {
		v = slices.Clone(v)
		for k := range v {
			if v[k] != 0 {
				v[k] = 1
			}
		}
	}
	return constVal(&tens{shape: x.shape, i: v, isInt: true})
}

func unaryFunc(op string) func(float32) float32 {
	switch op {
	case "Relu":
		return func(x float32) float32 { return max(x, 0) }
	case "Sigmoid":
		return func(x float32) float32 { return float32(1 / (1 + math.Exp(-float64(x)))) }
	case "Tanh":
		return func(x float32) float32 { return float32(math.Tanh(float64(x))) }
	case "Exp":
		return func(x float32) float32 { return float32(math.Exp(float64(x))) }
	case "Log":
		return func(x float32) float32 { return float32(math.Log(float64(x))) }
	case "Sqrt":
		return func(x float32) float32 { return float32(math.Sqrt(float64(x))) }
	case "Neg":
		return func(x float32) float32 { return -x }
	case "Abs":
		return func(x float32) float32 { return float32(math.Abs(float64(x))) }
	case "Floor":
		return func(x float32) float32 { return float32(math.Floor(float64(x))) }
	case "Ceil":
		return func(x float32) float32 { return float32(math.Ceil(float64(x))) }
	case "Reciprocal":
		return func(x float32) float32 { return 1 / x }
	}
	fail("internal: unknown unary op %s", op)
	return nil
}

func (b *builder) unaryOp(op string, x *value, f func(float32) float32) *value {
	if x.c != nil && x.c.isInt {
		if op == "Neg" || op == "Abs" || op == "Relu" {
			v := make([]int64, len(x.c.i))
			for k, e := range x.c.i {
				v[k] = int64(f(float32(e)))
			}
			return constVal(&tens{shape: x.shape, i: v, isInt: true})
		}
		fail("integer input is not supported")
	}
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		for k, v := range ins[0] {
			out[k] = f(v)
		}
	})
}

func (b *builder) clipBounds(a *attrs, ins []*value) (lo, hi float32) {
	lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
	if b.p.opset < 11 {
		return a.float("min", lo), a.float("max", hi)
	}
	if v := opt(ins, 1); v != nil {
		lo = constant(ins, 1, "min").floats()[0]
	}
	if v := opt(ins, 2); v != nil {
		hi = constant(ins, 2, "max").floats()[0]
	}
	return lo, hi
}

func binFunc[T number](op string) func(x, y T) T {
	switch op {
	case "Add":
		return func(x, y T) T { return x + y }
	case "Sub":
		return func(x, y T) T { return x - y }
	case "Mul":
		return func(x, y T) T { return x * y }
	case "Div":
		return func(x, y T) T { return x / y }
	case "Pow":
		return func(x, y T) T { return T(math.Pow(float64(x), float64(y))) }
	}
	fail("internal: unknown binary op %s", op)
	return nil
}

func (b *builder) binaryOp(op string, x, y *value) *value {
	shape, err := broadcastShape(x.shape, y.shape)
	if err != nil {
		fail("%v", err)
	}
	if x.c != nil && y.c != nil && (x.c.isInt || y.c.isInt) {
		if !x.c.isInt || !y.c.isInt {
			fail("mixed integer and float inputs")
		}
		if op == "Div" && slices.Contains(y.c.i, 0) {
			fail("integer division by zero")
		}
		out := make([]int64, numel(shape))
		bcast(out, shape, x.c.i, x.shape, y.c.i, y.shape, binFunc[int64](op))
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	f := binFunc[float32](op)
	xs, ys := x.shape, y.shape
	return b.emit(shape, []*value{x, y}, func(out []float32, ins [][]float32) {
		bcast(out, shape, ins[0], xs, ins[1], ys, f)
	})
}

func (b *builder) softmax(a *attrs, x *value) *value {
	r := len(x.shape)
	def := int64(1)
	if b.p.opset >= 13 {
		def = -1
	}
	ax, err := normAxis(a.int("axis", def), r)
	if err != nil {
		fail("%v", err)
	}
	var outer, n, inner int
	if b.p.opset >= 13 {
		outer, n, inner = numel(x.shape[:ax]), x.shape[ax], numel(x.shape[ax+1:])
	} else { // coerced to 2-D [outer, n]
		outer, n, inner = numel(x.shape[:ax]), numel(x.shape[ax:]), 1
	}
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for o := 0; o < outer; o++ {
			for i := 0; i < inner; i++ {
				base := o*n*inner + i
				m := float32(math.Inf(-1))
				for k := 0; k < n; k++ {
					m = max(m, in[base+k*inner])
				}
				var s float64
				for k := 0; k < n; k++ {
					e := math.Exp(float64(in[base+k*inner] - m))
					out[base+k*inner] = float32(e)
					s += e
				}
				for k := 0; k < n; k++ {
					out[base+k*inner] = float32(float64(out[base+k*inner]) / s)
				}
			}
		}
	})
}

func (b *builder) transposeOp(a *attrs, x *value) *value {
	r := len(x.shape)
	perm64 := a.ints("perm", nil)
	perm := make([]int, r)
	if perm64 == nil {
		for k := range perm {
			perm[k] = r - 1 - k
		}
	} else {
		if len(perm64) != r {
			fail("attribute \"perm\" %v does not match rank %d", perm64, r)
		}
		seen := make([]bool, r)
		for k, p := range perm64 {
			if p < 0 || int(p) >= r || seen[p] {
				fail("attribute \"perm\" %v is not a permutation", perm64)
			}
			seen[p] = true
			perm[k] = int(p)
		}
	}
	shape := make([]int, r)
	for k, p := range perm {
		shape[k] = x.shape[p]
	}
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		transpose(out, x.c.i, x.shape, perm)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	xs := x.shape
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		transpose(out, ins[0], xs, perm)
	})
}

func (b *builder) concatOp(a *attrs, ins []*value) *value {
	if len(ins) == 0 {
		fail("no inputs")
	}
	var vals []*value
	for k := range ins {
		vals = append(vals, need(ins, k, "input"))
	}
	r := len(vals[0].shape)
	ax, err := normAxis(a.int("axis", 0), r)
	if err != nil {
		fail("%v", err)
	}
	shape := slices.Clone(vals[0].shape)
	shapes := [][]int{vals[0].shape}
	allInt := true
	for _, v := range vals {
		if v.c == nil || !v.c.isInt {
			allInt = false
		}
	}
	for k, v := range vals[1:] {
		if len(v.shape) != r {
			fail("input %d has shape %v, input 0 has %v", k+1, v.shape, vals[0].shape)
		}
		for d := range v.shape {
			if d != ax && v.shape[d] != shape[d] {
				fail("input %d has shape %v, incompatible with %v along axis %d", k+1, v.shape, vals[0].shape, d)
			}
		}
		shape[ax] += v.shape[ax]
		shapes = append(shapes, v.shape)
	}
	if allInt {
		out := make([]int64, numel(shape))
		data := make([][]int64, len(vals))
		for k, v := range vals {
			data[k] = v.c.i
		}
		concat(out, data, shapes, ax)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	if parts := b.zeroCopyParts(vals, ax); parts != nil {
		v := b.emit(shape, vals, func([]float32, [][]float32) {})
		v.op.parts = parts
		inner := numel(shape[ax+1:])
		off := 0
		for k, p := range parts {
			p.into, p.off, p.stride = v.op, off*inner, shape[ax]*inner
			off += vals[k].shape[ax]
		}
		return v
	}
	return b.emit(shape, vals, func(out []float32, ins [][]float32) {
		concat(out, ins, shapes, ax)
	})
}

// zeroCopyParts returns the producers of a Concat's inputs when they can
// write straight into the Concat's output: concatenation along axis 1 of
// distinct Conv outputs that nothing else uses.
func (b *builder) zeroCopyParts(vals []*value, ax int) []*gop {
	if ax != 1 {
		return nil
	}
	n := &b.p.nodes[b.idx]
	var parts []*gop
	for k, v := range vals {
		name := n.inputs[k]
		if v.op == nil || v.op.fnInto == nil || v.op.into != nil || !sameInts(v.shape, v.op.outShape) ||
			len(b.p.consumers[name]) != 1 || b.p.isOutput[name] || slices.Contains(parts, v.op) {
			return nil
		}
		for j, other := range n.inputs {
			if j != k && other == name {
				return nil
			}
		}
		parts = append(parts, v.op)
	}
	return parts
}

func sameInts(a []int, b tensor.Shape) bool { return slices.Equal(a, []int(b)) }

func (b *builder) gatherOp(a *attrs, x *value, idx *tens) *value {
	r := len(x.shape)
	ax, err := normAxis(a.int("axis", 0), r)
	if err != nil {
		fail("%v", err)
	}
	raw := idx.ints()
	ids := make([]int, len(raw))
	for k, v := range raw {
		if v < 0 {
			v += int64(x.shape[ax])
		}
		if v < 0 || int(v) >= x.shape[ax] {
			fail("index %d out of range for axis %d of shape %v", raw[k], ax, x.shape)
		}
		ids[k] = int(v)
	}
	shape := append(append(slices.Clone(x.shape[:ax]), idx.shape...), x.shape[ax+1:]...)
	xs := x.shape
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		gather(out, x.c.i, xs, ax, ids)
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		gather(out, ins[0], xs, ax, ids)
	})
}

// mapsOp applies gatherAxes with per-axis maps (int or float input).
func (b *builder) mapsOp(x *value, maps [][]int, fill float32) *value {
	shape := make([]int, len(maps))
	for k, m := range maps {
		shape[k] = len(m)
	}
	xs := x.shape
	if x.c != nil && x.c.isInt {
		out := make([]int64, numel(shape))
		gatherAxes(out, x.c.i, xs, maps, int64(fill))
		return constVal(&tens{shape: shape, i: out, isInt: true})
	}
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		gatherAxes(out, ins[0], xs, maps, fill)
	})
}

func identityMaps(shape []int) [][]int {
	maps := make([][]int, len(shape))
	for k, d := range shape {
		maps[k] = make([]int, d)
		for i := range maps[k] {
			maps[k][i] = i
		}
	}
	return maps
}

func (b *builder) sliceOp(a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	var starts, ends, axes, steps []int64
	if b.p.opset < 10 {
		starts, ends, axes = a.ints("starts", nil), a.ints("ends", nil), a.ints("axes", nil)
	} else {
		starts, ends = constant(ins, 1, "starts").ints(), constant(ins, 2, "ends").ints()
		if opt(ins, 3) != nil {
			axes = constant(ins, 3, "axes").ints()
		}
		if opt(ins, 4) != nil {
			steps = constant(ins, 4, "steps").ints()
		}
	}
	if len(starts) != len(ends) {
		fail("starts %v and ends %v differ in length", starts, ends)
	}
	if axes == nil {
		for k := range starts {
			axes = append(axes, int64(k))
		}
	}
	if steps == nil {
		steps = make([]int64, len(starts))
		for k := range steps {
			steps[k] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		fail("starts, ends, axes and steps differ in length")
	}
	maps := identityMaps(x.shape)
	for k := range starts {
		ax, err := normAxis(axes[k], r)
		if err != nil {
			fail("%v", err)
		}
		d := int64(x.shape[ax])
		st, en, step := starts[k], ends[k], steps[k]
		if step == 0 {
			fail("step 0 on axis %d", ax)
		}
		if st < 0 {
			st += d
		}
		if en < 0 {
			en += d
		}
		if step > 0 {
			st, en = max(0, min(st, d)), max(0, min(en, d))
		} else {
			st, en = max(0, min(st, d-1)), max(-1, min(en, d-1))
		}
		var m []int
		for i := st; (step > 0 && i < en) || (step < 0 && i > en); i += step {
			m = append(m, int(i))
		}
		maps[ax] = m
	}
	return b.mapsOp(x, maps, 0)
}

func (b *builder) splitOp(a *attrs, ins []*value, nout int) []*value {
	x := need(ins, 0, "input")
	ax, err := normAxis(a.int("axis", 0), len(x.shape))
	if err != nil {
		fail("%v", err)
	}
	var split []int64
	if b.p.opset >= 13 {
		if opt(ins, 1) != nil {
			split = constant(ins, 1, "split").ints()
		}
		if b.p.opset >= 18 {
			if no := a.int("num_outputs", 0); no != 0 && int(no) != nout {
				fail("attribute \"num_outputs\" = %d but the node has %d outputs", no, nout)
			}
		}
	} else {
		split = a.ints("split", nil)
	}
	d := x.shape[ax]
	if split == nil {
		per := (d + nout - 1) / nout
		for k := 0; k < nout; k++ {
			split = append(split, int64(min(per, d-k*per)))
		}
	}
	if len(split) != nout {
		fail("split %v has %d parts, the node has %d outputs", split, len(split), nout)
	}
	var outs []*value
	off := 0
	for _, s := range split {
		if s < 0 {
			fail("negative split size in %v", split)
		}
		maps := identityMaps(x.shape)
		m := make([]int, s)
		for i := range m {
			m[i] = off + i
		}
		maps[ax] = m
		off += int(s)
		outs = append(outs, b.mapsOp(x, maps, 0))
	}
	if off != d {
		fail("split %v sums to %d, axis %d has size %d", split, off, ax, d)
	}
	return outs
}

func (b *builder) padOp(a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	mode := a.str("mode", "constant")
	var pads []int64
	var value float32
	switch {
	case b.p.opset < 2:
		pads, value = a.ints("paddings", nil), a.float("value", 0)
	case b.p.opset < 11:
		pads, value = a.ints("pads", nil), a.float("value", 0)
	default:
		pads = constant(ins, 1, "pads").ints()
		if opt(ins, 2) != nil {
			cv := constant(ins, 2, "constant_value")
			if len(cv.floats()) > 0 {
				value = cv.floats()[0]
			}
		}
		if opt(ins, 3) != nil {
			axes := constant(ins, 3, "axes").ints()
			full := make([]int64, 2*r)
			for k, ax := range axes {
				a, err := normAxis(ax, r)
				if err != nil {
					fail("%v", err)
				}
				full[a], full[a+r] = pads[k], pads[k+len(axes)]
			}
			pads = full
		}
	}
	if len(pads) != 2*r {
		fail("pads %v: want %d values for rank %d", pads, 2*r, r)
	}
	maps := make([][]int, r)
	for ax := 0; ax < r; ax++ {
		d := x.shape[ax]
		pb, pe := int(pads[ax]), int(pads[ax+r])
		n := d + pb + pe
		if n < 0 {
			fail("pads %v make axis %d negative", pads, ax)
		}
		m := make([]int, n)
		for i := range m {
			s := i - pb
			if s < 0 || s >= d {
				switch mode {
				case "constant":
					s = -1
				case "edge":
					s = max(0, min(s, d-1))
				case "reflect":
					if d == 1 {
						s = 0
						break
					}
					for s < 0 || s >= d {
						if s < 0 {
							s = -s
						}
						if s >= d {
							s = 2*(d-1) - s
						}
					}
				default:
					fail("attribute \"mode\" = %q: only constant, reflect and edge are supported", mode)
				}
			}
			m[i] = s
		}
		maps[ax] = m
	}
	return b.mapsOp(x, maps, value)
}

func (b *builder) expandOp(x *value, target []int64) *value {
	ts := make([]int, len(target))
	for k, d := range target {
		ts[k] = int(d)
	}
	shape, err := broadcastShape(x.shape, ts)
	if err != nil {
		fail("%v", err)
	}
	in := make([]int, len(shape))
	for k := range in {
		in[k] = 1
	}
	copy(in[len(shape)-len(x.shape):], x.shape)
	maps := make([][]int, len(shape))
	for k, d := range shape {
		maps[k] = make([]int, d)
		if in[k] != 1 {
			for i := range maps[k] {
				maps[k][i] = i
			}
		}
	}
	return b.mapsOp(alias(x, in), maps, 0)
}

func (b *builder) reduceMean(a *attrs, ins []*value) *value {
	x := need(ins, 0, "data")
	r := len(x.shape)
	var axes []int64
	if b.p.opset >= 18 {
		if opt(ins, 1) != nil {
			axes = constant(ins, 1, "axes").ints()
		}
		if a.int("noop_with_empty_axes", 0) != 0 && len(axes) == 0 {
			return x
		}
	} else {
		axes = a.ints("axes", nil)
	}
	keep := a.int("keepdims", 1) != 0
	red := make([]bool, r)
	if len(axes) == 0 {
		for k := range red {
			red[k] = true
		}
	}
	for _, ax := range axes {
		k, err := normAxis(ax, r)
		if err != nil {
			fail("%v", err)
		}
		red[k] = true
	}
	// Move reduced axes last, then average contiguous blocks.
	var perm []int
	for k := 0; k < r; k++ {
		if !red[k] {
			perm = append(perm, k)
		}
	}
	cnt := 1
	for k := 0; k < r; k++ {
		if red[k] {
			perm = append(perm, k)
			cnt *= x.shape[k]
		}
	}
	var shape []int
	for k := 0; k < r; k++ {
		switch {
		case !red[k]:
			shape = append(shape, x.shape[k])
		case keep:
			shape = append(shape, 1)
		}
	}
	xs := x.shape
	tmp := make([]float32, numel(xs))
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		transpose(tmp, ins[0], xs, perm)
		for o := range out {
			var s float32
			for _, v := range tmp[o*cnt : (o+1)*cnt] {
				s += v
			}
			out[o] = s / float32(cnt)
		}
	})
}

// convKey identifies a prepared convolution kernel.
type convKey struct {
	node  int
	shape kernels.ConvShape
}

// consumer returns the single node consuming name as its first input, or
// -1 when name has other uses or is a graph output.
func (b *builder) consumer(name string) int {
	cs := b.p.consumers[name]
	if len(cs) != 1 || b.p.isOutput[name] {
		return -1
	}
	j := cs[0]
	n := &b.p.nodes[j]
	if j <= b.idx || len(n.inputs) == 0 || n.inputs[0] != name {
		return -1
	}
	for _, in := range n.inputs[1:] {
		if in == name {
			return -1
		}
	}
	return j
}

func (b *builder) convOp(a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	w := constant(ins, 1, "W")
	var bias []float32
	if opt(ins, 2) != nil {
		bias = constant(ins, 2, "B").floats()
	}
	if len(x.shape) != 4 || len(w.shape) != 4 {
		fail("only 2-D convolution is supported (input %v, weight %v)", x.shape, w.shape)
	}
	s := kernels.ConvShape{
		InC: x.shape[1], InH: x.shape[2], InW: x.shape[3],
		OutC: w.shape[0], KH: w.shape[2], KW: w.shape[3],
		Groups: int(a.int("group", 1)),
	}
	if ks := a.ints("kernel_shape", nil); ks != nil && (len(ks) != 2 || int(ks[0]) != s.KH || int(ks[1]) != s.KW) {
		fail("attribute \"kernel_shape\" %v does not match weight shape %v", ks, w.shape)
	}
	if s.Groups <= 0 || s.InC%s.Groups != 0 || w.shape[1]*s.Groups != s.InC {
		fail("weight %v does not fit input %v with group=%d", w.shape, x.shape, s.Groups)
	}
	var pads [4]int
	s.StrideH, s.StrideW, s.DilH, s.DilW, pads = b.window(a, [2]int{s.KH, s.KW}, [2]int{s.InH, s.InW}, false)
	s.PadTop, s.PadLeft, s.PadBottom, s.PadRight = pads[0], pads[1], pads[2], pads[3]
	if err := s.Validate(); err != nil {
		fail("%v", err)
	}
	if bias != nil && len(bias) != s.OutC {
		fail("bias has %d values, want %d", len(bias), s.OutC)
	}
	// Fuse a following BatchNormalization and activation.
	n := &b.p.nodes[b.idx]
	out := n.outputs[0]
	weight := w.f
	var act kernels.Activation
	if j := b.consumer(out); j >= 0 && b.p.nodes[j].op == "BatchNormalization" {
		bn := &b.p.nodes[j]
		if scale, shift, ok := b.bnParams(bn, s.OutC); ok {
			weight = slices.Clone(weight)
			per := len(weight) / s.OutC
			nb := make([]float32, s.OutC)
			for o := 0; o < s.OutC; o++ {
				for k := range weight[o*per : (o+1)*per] {
					weight[o*per+k] *= scale[o]
				}
				var b0 float32
				if bias != nil {
					b0 = bias[o]
				}
				nb[o] = b0*scale[o] + shift[o]
			}
			bias = nb
			b.skip[j] = true
			out = bn.outputs[0]
		}
	}
	shape := []int{x.shape[0], s.OutC, s.OutH(), s.OutW()}
	// Fuse a following residual Add (the activation after it too).
	var res *value
	if j, r := b.residualAdd(out, shape); j >= 0 {
		res = r
		b.skip[j] = true
		out = b.p.nodes[j].outputs[0]
	}
	if j := b.consumer(out); j >= 0 {
		if ac, ok := b.fusableAct(j); ok {
			act = ac
			b.skip[j] = true
			out = b.p.nodes[j].outputs[0]
		}
	}
	key := convKey{b.idx, s}
	b.p.mu.Lock()
	conv, ok := b.p.convs[key]
	if !ok {
		var err error
		if conv, err = kernels.NewConv(s, weight, bias, act); err != nil {
			b.p.mu.Unlock()
			fail("%v", err)
		}
		b.p.convs[key] = conv
	}
	b.p.mu.Unlock()
	isz, osz := numel(x.shape[1:]), numel(shape[1:])
	batch := x.shape[0]
	if res != nil {
		v := b.emit(shape, []*value{x, res}, func(dst []float32, ins [][]float32) {
			forEachChunk(batch, func(i0, i1 int) {
				conv.ForwardAdd(dst[i0*osz:i1*osz], ins[0][i0*isz:i1*isz], ins[1][i0*osz:i1*osz], i1-i0)
			})
		})
		b.env[out] = v
		return v
	}
	v := b.emit(shape, []*value{x}, func(dst []float32, ins [][]float32) {
		forEachChunk(batch, func(i0, i1 int) {
			conv.Forward(dst[i0*osz:i1*osz], ins[0][i0*isz:i1*isz], i1-i0)
		})
	})
	if v.op != nil {
		v.op.fnInto = func(dst []float32, off, stride int, ins [][]float32) {
			forEachChunk(batch, func(i0, i1 int) {
				for i := i0; i < i1; i++ {
					conv.Forward(dst[i*stride+off:i*stride+off+osz], ins[0][i*isz:(i+1)*isz], 1)
				}
			})
		}
	}
	if out != n.outputs[0] {
		b.env[out] = v
	}
	return v
}

// residualAdd reports whether the only consumer of the value named out (a
// convolution's output of the given shape) is an Add of out and another
// runtime value of the same shape computed before node b.idx (a residual
// connection), which the convolution can add in its epilogue. It returns
// the Add's node index and the other operand, or -1.
func (b *builder) residualAdd(out string, shape []int) (int, *value) {
	cs := b.p.consumers[out]
	if len(cs) != 1 || b.p.isOutput[out] {
		return -1, nil
	}
	j := cs[0]
	n := &b.p.nodes[j]
	if j <= b.idx || n.op != "Add" || len(n.inputs) != 2 || len(n.outputs) != 1 || len(n.attrs) != 0 {
		return -1, nil
	}
	other := n.inputs[0]
	if other == out {
		other = n.inputs[1]
	}
	if other == out || (n.inputs[0] != out && n.inputs[1] != out) {
		return -1, nil // out + out, or not an input
	}
	v, ok := b.env[other]
	if !ok || v.c != nil || v.n == nil || !slices.Equal(v.shape, shape) {
		return -1, nil
	}
	return j, v
}

// forEachChunk splits [0, n) over up to GOMAXPROCS goroutines.
func forEachChunk(n int, f func(i0, i1 int)) { kernels.ParallelFor(n, runtime.GOMAXPROCS(0), f) }

// bnParams returns the per-channel scale and shift of a BatchNormalization
// node whose parameters are constants, checking its attributes.
func (b *builder) bnParams(n *onode, c int) (scale, shift []float32, ok bool) {
	for k := 1; k <= 4; k++ {
		if k >= len(n.inputs) {
			return nil, nil, false
		}
		v, ok := b.env[n.inputs[k]]
		if !ok || v.c == nil || len(v.c.f) != c {
			return nil, nil, false
		}
	}
	for _, o := range n.outputs[1:] {
		if o != "" && (len(b.p.consumers[o]) > 0 || b.p.isOutput[o]) {
			return nil, nil, false
		}
	}
	a := newAttrs(n)
	eps := b.bnAttrs(a)
	a.checkUnused()
	g, be, mean, vr := b.env[n.inputs[1]].c.f, b.env[n.inputs[2]].c.f, b.env[n.inputs[3]].c.f, b.env[n.inputs[4]].c.f
	scale, shift = make([]float32, c), make([]float32, c)
	for o := 0; o < c; o++ {
		scale[o] = g[o] / float32(math.Sqrt(float64(vr[o]+eps)))
		shift[o] = be[o] - mean[o]*scale[o]
	}
	return scale, shift, true
}

func (b *builder) bnAttrs(a *attrs) float32 {
	eps := a.float("epsilon", 1e-5)
	a.ignore("momentum", "is_test", "consumed_inputs")
	if a.int("spatial", 1) != 1 {
		fail("attribute \"spatial\" = 0 is not supported")
	}
	if a.int("training_mode", 0) != 0 {
		fail("attribute \"training_mode\" = 1 is not supported")
	}
	return eps
}

// fusableAct reports whether node j is an activation a conv kernel can
// apply, and which.
func (b *builder) fusableAct(j int) (kernels.Activation, bool) {
	n := &b.p.nodes[j]
	if len(n.outputs) != 1 {
		return kernels.Activation{}, false
	}
	a := newAttrs(n)
	switch n.op {
	case "Relu":
		if len(n.attrs) == 0 {
			return kernels.Activation{Kind: kernels.ActRelu}, true
		}
	case "LeakyRelu":
		al := a.float("alpha", 0.01)
		if len(n.attrs) <= 1 && a.has("alpha") == (len(n.attrs) == 1) {
			return kernels.Activation{Kind: kernels.ActLeakyRelu, Alpha: al}, true
		}
	case "Clip":
		lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
		if b.p.opset < 11 {
			lo, hi = a.float("min", lo), a.float("max", hi)
			for name := range n.attrs {
				if name != "min" && name != "max" {
					return kernels.Activation{}, false
				}
			}
			return kernels.Activation{Kind: kernels.ActClip, Min: lo, Max: hi}, true
		}
		if len(n.attrs) != 0 {
			return kernels.Activation{}, false
		}
		for k, bound := range []*float32{&lo, &hi} {
			if k+1 < len(n.inputs) && n.inputs[k+1] != "" {
				v, ok := b.env[n.inputs[k+1]]
				if !ok || v.c == nil || len(v.c.floats()) != 1 {
					return kernels.Activation{}, false
				}
				*bound = v.c.floats()[0]
			}
		}
		return kernels.Activation{Kind: kernels.ActClip, Min: lo, Max: hi}, true
	}
	return kernels.Activation{}, false
}

// window reads the strides, dilations and pads of a 2-D Conv or pooling
// node for kernel size k over input size in.
func (b *builder) window(a *attrs, k, in [2]int, pool bool) (sh, sw, dh, dw int, pads [4]int) {
	strides := a.ints("strides", []int64{1, 1})
	dil := a.ints("dilations", []int64{1, 1})
	if len(strides) != 2 || len(dil) != 2 {
		fail("attributes \"strides\" %v and \"dilations\" %v must have 2 values", strides, dil)
	}
	for _, v := range append(slices.Clone(strides), dil...) {
		if v <= 0 {
			fail("strides %v and dilations %v must be positive", strides, dil)
		}
	}
	sh, sw, dh, dw = int(strides[0]), int(strides[1]), int(dil[0]), int(dil[1])
	autoPad := a.str("auto_pad", "NOTSET")
	p := a.ints("pads", nil)
	switch autoPad {
	case "NOTSET":
		if p == nil {
			p = []int64{0, 0, 0, 0}
		}
		if len(p) != 4 {
			fail("attribute \"pads\" %v must have 4 values", p)
		}
		for i, v := range p {
			if v < 0 {
				fail("attribute \"pads\" %v must be non-negative", p)
			}
			pads[i] = int(v)
		}
	case "VALID":
	case "SAME_UPPER", "SAME_LOWER":
		st := [2]int{sh, sw}
		dl := [2]int{dh, dw}
		for d := 0; d < 2; d++ {
			out := (in[d] + st[d] - 1) / st[d]
			total := max(0, (out-1)*st[d]+(k[d]-1)*dl[d]+1-in[d])
			lo := total / 2
			if autoPad == "SAME_LOWER" {
				lo = total - total/2
			}
			pads[d], pads[d+2] = lo, total-lo
		}
	default:
		fail("attribute \"auto_pad\" = %q is not supported", autoPad)
	}
	return
}

func (b *builder) batchNorm(a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	eps := b.bnAttrs(a)
	if len(x.shape) < 2 {
		fail("input shape %v has no channel axis", x.shape)
	}
	c := x.shape[1]
	g, be, mean, vr := constant(ins, 1, "scale").floats(), constant(ins, 2, "B").floats(), constant(ins, 3, "mean").floats(), constant(ins, 4, "var").floats()
	if len(g) != c || len(be) != c || len(mean) != c || len(vr) != c {
		fail("parameters do not have %d channels", c)
	}
	scale, shift := make([]float32, c), make([]float32, c)
	for o := 0; o < c; o++ {
		scale[o] = g[o] / float32(math.Sqrt(float64(vr[o]+eps)))
		shift[o] = be[o] - mean[o]*scale[o]
	}
	inner := numel(x.shape[2:])
	return b.emit(x.shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for p := 0; p < len(in); p += inner {
			ch := (p / inner) % c
			sc, sf := scale[ch], shift[ch]
			for k, v := range in[p : p+inner] {
				out[p+k] = v*sc + sf
			}
		}
	})
}

func (b *builder) poolOp(op string, a *attrs, ins []*value) *value {
	x := need(ins, 0, "X")
	n := &b.p.nodes[b.idx]
	if len(n.outputs) > 1 && n.outputs[1] != "" && (len(b.p.consumers[n.outputs[1]]) > 0 || b.p.isOutput[n.outputs[1]]) {
		fail("output \"Indices\" is not supported")
	}
	if len(x.shape) != 4 {
		fail("only 2-D pooling (4-D input) is supported, input has shape %v", x.shape)
	}
	ks := a.ints("kernel_shape", nil)
	if len(ks) != 2 || ks[0] <= 0 || ks[1] <= 0 {
		fail("attribute \"kernel_shape\" %v must have 2 positive values", ks)
	}
	kh, kw := int(ks[0]), int(ks[1])
	ih, iw := x.shape[2], x.shape[3]
	sh, sw, dh, dw, pads := b.window(a, [2]int{kh, kw}, [2]int{ih, iw}, true)
	ceil := a.int("ceil_mode", 0) != 0
	a.ignore("storage_order")
	include := a.int("count_include_pad", 0) != 0
	if op == "AveragePool" && (dh != 1 || dw != 1) {
		fail("AveragePool with dilations is not supported")
	}
	outSize := func(in, k, s, d, pb, pe int) int {
		span := in + pb + pe - ((k-1)*d + 1)
		if span < 0 {
			fail("kernel %v larger than padded input %v", ks, x.shape)
		}
		o := span/s + 1
		if ceil {
			o = (span+s-1)/s + 1
			if (o-1)*s >= in+pb { // last window would start in the padding
				o--
			}
		}
		return o
	}
	oh := outSize(ih, kh, sh, dh, pads[0], pads[2])
	ow := outSize(iw, kw, sw, dw, pads[1], pads[3])
	shape := []int{x.shape[0], x.shape[1], oh, ow}
	planes := x.shape[0] * x.shape[1]
	isMax := op == "MaxPool"
	if isMax {
		ps := kernels.PoolShape{InH: ih, InW: iw, OutH: oh, OutW: ow, KH: kh, KW: kw,
			StrideH: sh, StrideW: sw, PadTop: pads[0], PadLeft: pads[1], DilH: dh, DilW: dw}
		if ps.Validate() == nil {
			return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
				kernels.MaxPool(out, ins[0], planes, ps)
			})
		}
	}
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		forEachChunk(planes, func(p0, p1 int) {
			for p := p0; p < p1; p++ {
				src := in[p*ih*iw : (p+1)*ih*iw]
				dst := out[p*oh*ow : (p+1)*oh*ow]
				for y := 0; y < oh; y++ {
					y0 := y*sh - pads[0]
					for xx := 0; xx < ow; xx++ {
						x0 := xx*sw - pads[1]
						if isMax {
							m := float32(math.Inf(-1))
							for ky := 0; ky < kh; ky++ {
								iy := y0 + ky*dh
								if iy < 0 || iy >= ih {
									continue
								}
								row := src[iy*iw:]
								for kx := 0; kx < kw; kx++ {
									ix := x0 + kx*dw
									if ix >= 0 && ix < iw && row[ix] > m {
										m = row[ix]
									}
								}
							}
							dst[y*ow+xx] = m
							continue
						}
						ye, xe := min(y0+kh, ih+pads[2]), min(x0+kw, iw+pads[3])
						area := (ye - y0) * (xe - x0)
						ys, xs := max(y0, 0), max(x0, 0)
						ye, xe = min(ye, ih), min(xe, iw)
						var s float32
						for iy := ys; iy < ye; iy++ {
							for _, v := range src[iy*iw+xs : iy*iw+xe] {
								s += v
							}
						}
						if !include {
							area = (ye - ys) * (xe - xs)
						}
						dst[y*ow+xx] = s / float32(area)
					}
				}
			}
		})
	})
}

func (b *builder) globalPool(op string, x *value) *value {
	if len(x.shape) < 3 {
		fail("input shape %v has no spatial axes", x.shape)
	}
	shape := slices.Clone(x.shape)
	for k := 2; k < len(shape); k++ {
		shape[k] = 1
	}
	inner := numel(x.shape[2:])
	isMax := op == "GlobalMaxPool"
	return b.emit(shape, []*value{x}, func(out []float32, ins [][]float32) {
		in := ins[0]
		for p := range out {
			plane := in[p*inner : (p+1)*inner]
			if isMax {
				m := float32(math.Inf(-1))
				for _, v := range plane {
					m = max(m, v)
				}
				out[p] = m
				continue
			}
			var s float32
			for _, v := range plane {
				s += v
			}
			out[p] = s / float32(inner)
		}
	})
}

func (b *builder) gemmOp(a *attrs, ins []*value) *value {
	x, y := need(ins, 0, "A"), need(ins, 1, "B")
	if b.p.opset < 7 {
		a.ignore("broadcast")
	}
	transA, transB := a.int("transA", 0) != 0, a.int("transB", 0) != 0
	alpha, beta := a.float("alpha", 1), a.float("beta", 1)
	if len(x.shape) != 2 || len(y.shape) != 2 {
		fail("inputs must be matrices, got %v and %v", x.shape, y.shape)
	}
	m, k := x.shape[0], x.shape[1]
	if transA {
		m, k = k, m
	}
	k2, n := y.shape[0], y.shape[1]
	if transB {
		k2, n = n, k2
	}
	if k != k2 {
		fail("inner dimensions differ: A %v (transA=%v), B %v (transB=%v)", x.shape, transA, y.shape, transB)
	}
	shape := []int{m, n}
	var cb []float32 // beta·C broadcast to [m, n]
	var cv *value
	if c := opt(ins, 2); c != nil && beta != 0 {
		if _, err := broadcastShape(shape, c.shape); err != nil || len(c.shape) > 2 {
			fail("C %v cannot be broadcast to %v", c.shape, shape)
		}
		if c.c != nil {
			cb = make([]float32, m*n)
			cs := c.shape
			bcast(cb, shape, make([]float32, m*n), shape, c.c.floats(), cs, func(_, v float32) float32 { return beta * v })
		} else {
			cv = c
		}
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	vals := []*value{x, y}
	var cs []int
	if cv != nil {
		vals = append(vals, cv)
		cs = cv.shape
	}
	return b.emit(shape, vals, func(out []float32, ins [][]float32) {
		kernels.Gemm(transA, transB, m, n, k, alpha, ins[0], lda, ins[1], ldb, 0, out, n)
		switch {
		case cb != nil:
			for i := range out {
				out[i] += cb[i]
			}
		case cv != nil:
			bcast(out, shape, out, shape, ins[2], cs, func(o, v float32) float32 { return o + beta*v })
		}
	})
}

func (b *builder) matmulOp(x, y *value) *value {
	as, bs := slices.Clone(x.shape), slices.Clone(y.shape)
	if len(as) == 0 || len(bs) == 0 {
		fail("MatMul of a scalar")
	}
	vecA, vecB := len(as) == 1, len(bs) == 1
	if vecA {
		as = []int{1, as[0]}
	}
	if vecB {
		bs = []int{bs[0], 1}
	}
	m, k, k2, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-2], bs[len(bs)-1]
	if k != k2 {
		fail("inner dimensions differ: %v × %v", x.shape, y.shape)
	}
	batch, err := broadcastShape(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		fail("%v", err)
	}
	var outShape []int
	outShape = append(outShape, batch...)
	if !vecA {
		outShape = append(outShape, m)
	}
	if !vecB {
		outShape = append(outShape, n)
	}
	nb := numel(batch)
	// Offsets of the batch matrices of A and B (broadcast batch axes).
	offA, offB := make([]int, nb), make([]int, nb)
	if len(batch) > 0 {
		aBatch, bBatch := as[:len(as)-2], bs[:len(bs)-2]
		sa, sb := bstrides(aBatch, batch), bstrides(bBatch, batch)
		idx := make([]int, len(batch))
		for i := 0; i < nb; i++ {
			for d := range batch {
				offA[i] += idx[d] * sa[d]
				offB[i] += idx[d] * sb[d]
			}
			offA[i] *= m * k
			offB[i] *= k * n
			for d := len(batch) - 1; d >= 0; d-- {
				idx[d]++
				if idx[d] < batch[d] {
					break
				}
				idx[d] = 0
			}
		}
	}
	return b.emit(outShape, []*value{x, y}, func(out []float32, ins [][]float32) {
		for i := 0; i < nb; i++ {
			kernels.Gemm(false, false, m, n, k, 1, ins[0][offA[i]:], k, ins[1][offB[i]:], n, 0, out[i*m*n:], n)
		}
	})
}
