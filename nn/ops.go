package nn

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/amt-dev/amt/nn/kernels"
)

// opDef is what the engine knows about one ONNX operator type (default
// domain). Adding an operator means writing its build function (and, where
// they apply, its per-image rule and activation) in the file of its family
// and adding one entry to opTable.
type opDef struct {
	// build compiles the node being built (b.node()) from its attributes
	// and inputs into its outputs. Required.
	build buildFunc
	// perImage reports whether the node, all of whose runtime outputs have
	// the batch axis first (axis 0, b.batch images), computes image i of its
	// outputs from image i of its inputs alone; see builder.perImage, which
	// calls it. nil: never, which keeps a graph using the operator on a
	// runtime value from being run image by image.
	perImage func(b *builder, a *attrs, ins, outs []*value) bool
	// act is set for an activation that a convolution can apply in its
	// epilogue: it reads the node's attributes and constant inputs (input 0
	// is not read; it may be nil) into the kernels' description of the
	// activation, failing on what is not supported. Build functions read
	// their parameters through it too, so they are parsed in one place.
	act func(b *builder, a *attrs, ins []*value) kernels.Activation
	// chain is set for an element-wise operator that can be part of a
	// fused element-wise chain (fuse.go): it returns the operator's loop
	// over a block and its number of operands. A node of such an operator
	// first tries to compile the chain starting with it.
	chain chainFunc
}

// buildFunc compiles the node being built (b.node()) from its attributes
// (a) and inputs (ins; nil for an omitted optional input) into its outputs,
// one per node output; a nil or missing output is one the engine does not
// compute. It fails (see fail) on what it does not support.
type buildFunc func(b *builder, a *attrs, ins []*value) []*value

// one adapts the build function of an operator with one output.
func one(f func(b *builder, a *attrs, ins []*value) *value) buildFunc {
	return func(b *builder, a *attrs, ins []*value) []*value { return []*value{f(b, a, ins)} }
}

// opTable holds every supported operator type. It is filled in init
// because build functions refer back to it (a Conv asks its consumer's
// entry whether it is a fusable activation).
var opTable map[string]opDef

func init() {
	opTable = map[string]opDef{
		// Element-wise (elementwise.go, activation.go, binary.go,
		// variadic.go, softmax.go; the fused chains of them in fuse.go).
		"Abs":             {build: unaryInt(abs), perImage: batchedFirst, chain: ewUnary(abs)},
		"Add":             {build: arith(arithAdd), perImage: broadcastPerImage, chain: ewAdd},
		"Ceil":            {build: unary(ceil), perImage: batchedFirst},
		"Celu":            {build: one(celuOp), perImage: batchedFirst},
		"Clip":            {build: one(clipOp), perImage: batchedFirst, act: clipAct, chain: ewAct(clipAct)},
		"Cos":             {build: unary(cos), perImage: batchedFirst},
		"Div":             {build: arith(arithDiv), perImage: broadcastPerImage, chain: ewDiv},
		"Elu":             {build: one(eluOp), perImage: batchedFirst},
		"Erf":             {build: unary(erf), perImage: batchedFirst, chain: ewUnary(erf)},
		"Exp":             {build: unary(exp), perImage: batchedFirst, chain: ewUnary(exp)},
		"Floor":           {build: unary(floor), perImage: batchedFirst},
		"HardSigmoid":     {build: one(hardSigmoidOp), perImage: batchedFirst, chain: ewHardSigmoid},
		"HardSwish":       {build: one(hardSwishOp), perImage: batchedFirst, chain: ewUnary(hardSwish)},
		"LeakyRelu":       {build: one(leakyReluOp), perImage: batchedFirst, act: leakyReluAct, chain: ewAct(leakyReluAct)},
		"Log":             {build: unary(ln), perImage: batchedFirst, chain: ewUnary(ln)},
		"LogSoftmax":      {build: one(logSoftmaxOp), perImage: softmaxPerImage},
		"Max":             {build: variadic(maxOf[float32], maxOf[int64], false), perImage: broadcastPerImage},
		"Mean":            {build: variadic(add[float32], add[int64], true), perImage: broadcastPerImage},
		"Min":             {build: variadic(minOf[float32], minOf[int64], false), perImage: broadcastPerImage},
		"Mod":             {build: one(modOp), perImage: broadcastPerImage},
		"Mul":             {build: arith(arithMul), perImage: broadcastPerImage, chain: ewMul},
		"Neg":             {build: unaryInt(neg), perImage: batchedFirst, chain: ewUnary(neg)},
		"Pow":             {build: binop(pow[float32], pow[int64]), perImage: broadcastPerImage, chain: ewBinary(pow[float32])},
		"PRelu":           {build: binop(prelu[float32], prelu[int64]), perImage: broadcastPerImage},
		"Reciprocal":      {build: unary(reciprocal), perImage: batchedFirst, chain: ewUnary(reciprocal)},
		"Relu":            {build: unaryInt(relu), perImage: batchedFirst, act: reluAct, chain: ewAct(reluAct)},
		"Round":           {build: unary(round), perImage: batchedFirst},
		"Selu":            {build: one(seluOp), perImage: batchedFirst},
		"Shrink":          {build: one(shrinkOp), perImage: batchedFirst},
		"Sigmoid":         {build: unary(sigmoid), perImage: batchedFirst, chain: ewUnary(sigmoid)},
		"Sign":            {build: unaryInt(sign), perImage: batchedFirst},
		"Sin":             {build: unary(sin), perImage: batchedFirst},
		"Softmax":         {build: one(softmaxOp), perImage: softmaxPerImage},
		"Softplus":        {build: unary(softplus), perImage: batchedFirst, chain: ewUnary(softplus)},
		"Softsign":        {build: unary(softsign), perImage: batchedFirst},
		"Sqrt":            {build: unary(sqrt), perImage: batchedFirst, chain: ewUnary(sqrt)},
		"Sub":             {build: arith(arithSub), perImage: broadcastPerImage, chain: ewSub},
		"Sum":             {build: variadic(add[float32], add[int64], false), perImage: broadcastPerImage},
		"Tanh":            {build: unary(tanh), perImage: batchedFirst, chain: ewUnary(tanh)},
		"ThresholdedRelu": {build: one(thresholdedReluOp), perImage: batchedFirst},

		// Comparisons, logic and Where (logic.go).
		"And":            {build: logical(and), perImage: broadcastPerImage},
		"Equal":          {build: compare(equal), perImage: broadcastPerImage},
		"Greater":        {build: compare(greater), perImage: broadcastPerImage},
		"GreaterOrEqual": {build: compare(greaterOrEqual), perImage: broadcastPerImage},
		"Less":           {build: compare(less), perImage: broadcastPerImage},
		"LessOrEqual":    {build: compare(lessOrEqual), perImage: broadcastPerImage},
		"Not":            {build: one(notOp), perImage: batchedFirst},
		"Or":             {build: logical(or), perImage: broadcastPerImage},
		"Where":          {build: one(whereOp), perImage: broadcastPerImage},
		"Xor":            {build: logical(xor), perImage: broadcastPerImage},

		// Shapes, copies and values known at load time (reshape.go, constant.go,
		// transpose.go, concat.go, gather.go, slice.go, pad.go, layout.go).
		"Cast":            {build: one(castOp), perImage: batchedFirst},
		"Concat":          {build: one(concatOp), perImage: concatPerImage},
		"Constant":        {build: one(constantOp)},
		"ConstantOfShape": {build: one(constantOfShapeOp)},
		"DepthToSpace":    {build: one(depthToSpaceOp), perImage: batchedFirst},
		"Dropout":         {build: one(dropoutOp), perImage: batchedFirst},
		"Expand":          {build: one(expandOp), perImage: expandPerImage},
		"Flatten":         {build: one(flattenOp), perImage: flattenPerImage},
		"Gather":          {build: one(gatherOp), perImage: axisPerImage(0)},
		"Identity":        {build: one(identityOp), perImage: batchedFirst},
		"Pad":             {build: one(padOp), perImage: padPerImage},
		"Range":           {build: one(rangeOp)},
		"Reshape":         {build: one(reshapeOp), perImage: batchedFirst},
		"ScatterND":       {build: one(scatterNDOp)},
		"Shape":           {build: one(shapeOp)},
		"Size":            {build: one(sizeOp)},
		"Slice":           {build: one(sliceOp), perImage: slicePerImage},
		"SpaceToDepth":    {build: one(spaceToDepthOp), perImage: batchedFirst},
		"Split":           {build: splitOp, perImage: axisPerImage(0)},
		"Squeeze":         {build: one(squeezeOp), perImage: batchedFirst},
		"Tile":            {build: one(tileOp), perImage: tilePerImage},
		"Transpose":       {build: one(transposeOp), perImage: transposePerImage},
		"Unsqueeze":       {build: one(unsqueezeOp), perImage: batchedFirst},

		// Resampling (resize.go).
		"Resize":   {build: one(resizeOp)},
		"Upsample": {build: one(upsampleOp)},

		// Convolution, normalisation and pooling (conv.go, convtranspose.go,
		// norm.go).
		"AveragePool":           {build: one(pool(false)), perImage: batchedFirst},
		"BatchNormalization":    {build: one(batchNormOp), perImage: batchedFirst},
		"Conv":                  {build: one(convAnyOp), perImage: batchedFirst},
		"ConvTranspose":         {build: one(convTransposeOp), perImage: batchedFirst},
		"GlobalAveragePool":     {build: one(globalPool(false)), perImage: batchedFirst},
		"GlobalMaxPool":         {build: one(globalPool(true)), perImage: batchedFirst},
		"InstanceNormalization": {build: one(instanceNormOp), perImage: batchedFirst},
		"LayerNormalization":    {build: one(layerNormOp), perImage: layerNormPerImage},
		"LRN":                   {build: one(lrnOp), perImage: batchedFirst},
		"MaxPool":               {build: one(pool(true)), perImage: batchedFirst},

		// Matrix products (gemm.go, einsum.go).
		"Einsum": {build: one(einsumOp), perImage: einsumPerImage},
		"Gemm":   {build: one(gemmOp), perImage: gemmPerImage},
		"MatMul": {build: one(matmulOp), perImage: matmulPerImage},

		// Reductions (reduce.go).
		"ArgMax":          {build: argOp(true), perImage: axisPerImage(0)},
		"ArgMin":          {build: argOp(false), perImage: axisPerImage(0)},
		"ReduceL1":        {build: reduceOp(rL1, 18), perImage: reducePerImage(18)},
		"ReduceL2":        {build: reduceOp(rL2, 18), perImage: reducePerImage(18)},
		"ReduceLogSum":    {build: reduceOp(rLogSum, 18), perImage: reducePerImage(18)},
		"ReduceLogSumExp": {build: reduceOp(rLogSumExp, 18), perImage: reducePerImage(18)},
		"ReduceMax":       {build: reduceOp(rMax, 18), perImage: reducePerImage(18)},
		"ReduceMean":      {build: reduceOp(rMean, 18), perImage: reducePerImage(18)},
		"ReduceMin":       {build: reduceOp(rMin, 18), perImage: reducePerImage(18)},
		"ReduceProd":      {build: reduceOp(rProd, 18), perImage: reducePerImage(18)},
		"ReduceSum":       {build: reduceOp(rSum, 13), perImage: reducePerImage(13)},
		"ReduceSumSquare": {build: reduceOp(rSumSquare, 18), perImage: reducePerImage(18)},
		"TopK":            {build: topKOp, perImage: axisPerImage(-1)},
	}
	// An element-wise operator first tries to compile the chain it
	// starts (fuse.go).
	for name, def := range opTable {
		if def.chain != nil {
			def.build = chainFirst(def.build)
			opTable[name] = def
		}
	}
}

// chainFirst wraps the build function of an element-wise operator: the
// node compiles the fused chain it starts if there is one, else itself.
func chainFirst(build buildFunc) buildFunc {
	return func(b *builder, a *attrs, ins []*value) []*value {
		if v, result, ok := b.fuseChain(); ok {
			for name := range a.n.attrs {
				a.used[name] = true // checked by the chain
			}
			b.env[result] = v
			return []*value{v}
		}
		return build(b, a, ins)
	}
}

// SupportedOps returns the ONNX operator types (default domain) the engine
// implements, sorted. An operator's attributes and inputs may still hold
// values it does not implement; loading such a model fails naming them.
func SupportedOps() []string { return slices.Sorted(maps.Keys(opTable)) }

// checkOps returns an error listing every operator of nodes the engine does
// not implement, each once, in order of first use, with the opset the
// model imports it from (the default domain's, opset), its first node and
// the number of nodes using it; nil if there is none.
func checkOps(nodes []onode, opset int64) error {
	type use struct {
		op    string // with its domain when not the default one
		opset int64  // the default domain's opset, 0 for another domain
		first string // name of the first node
		count int
	}
	var uses []*use
	byOp := map[string]*use{}
	for _, n := range nodes {
		op, set := n.op, opset
		if n.domain != "" && n.domain != "ai.onnx" {
			op, set = fmt.Sprintf("%s in domain %q", n.op, n.domain), 0
		} else if _, ok := opTable[n.op]; ok {
			continue
		}
		u := byOp[op]
		if u == nil {
			u = &use{op: op, opset: set, first: n.name}
			byOp[op] = u
			uses = append(uses, u)
		}
		u.count++
	}
	if len(uses) == 0 {
		return nil
	}
	parts := make([]string, len(uses))
	for k, u := range uses {
		parts[k] = u.op + " ("
		if u.opset > 0 {
			parts[k] += fmt.Sprintf("opset %d, ", u.opset)
		}
		parts[k] += fmt.Sprintf("node %q", u.first)
		if u.count > 1 {
			parts[k] += fmt.Sprintf(" and %d more", u.count-1)
		}
		parts[k] += ")"
	}
	if len(uses) == 1 {
		return fmt.Errorf("unsupported operator %s", parts[0])
	}
	return fmt.Errorf("%d unsupported operators: %s", len(uses), strings.Join(parts, ", "))
}
