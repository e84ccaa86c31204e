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
		// Element-wise (elementwise.go).
		"Abs":         {build: unaryInt(abs), perImage: batchedFirst},
		"Add":         {build: binop(add[float32], add[int64]), perImage: broadcastPerImage},
		"Ceil":        {build: unary(ceil), perImage: batchedFirst},
		"Clip":        {build: one(clipOp), perImage: batchedFirst, act: clipAct},
		"Div":         {build: binop(div[float32], divInt), perImage: broadcastPerImage},
		"Elu":         {build: one(eluOp), perImage: batchedFirst},
		"Exp":         {build: unary(exp), perImage: batchedFirst},
		"Floor":       {build: unary(floor), perImage: batchedFirst},
		"HardSigmoid": {build: one(hardSigmoidOp), perImage: batchedFirst},
		"HardSwish":   {build: unary(hardSwish), perImage: batchedFirst},
		"LeakyRelu":   {build: one(leakyReluOp), perImage: batchedFirst, act: leakyReluAct},
		"Log":         {build: unary(ln), perImage: batchedFirst},
		"Mul":         {build: binop(mul[float32], mul[int64]), perImage: broadcastPerImage},
		"Neg":         {build: unaryInt(neg), perImage: batchedFirst},
		"Pow":         {build: binop(pow[float32], pow[int64]), perImage: broadcastPerImage},
		"Reciprocal":  {build: unary(reciprocal), perImage: batchedFirst},
		"Relu":        {build: unaryInt(relu), perImage: batchedFirst, act: reluAct},
		"Sigmoid":     {build: unary(sigmoid), perImage: batchedFirst},
		"Softmax":     {build: one(softmaxOp), perImage: softmaxPerImage},
		"Sqrt":        {build: unary(sqrt), perImage: batchedFirst},
		"Sub":         {build: binop(sub[float32], sub[int64]), perImage: broadcastPerImage},
		"Tanh":        {build: unary(tanh), perImage: batchedFirst},

		// Shapes, copies and values known at load time (shape.go).
		"Cast":            {build: one(castOp), perImage: batchedFirst},
		"Concat":          {build: one(concatOp), perImage: concatPerImage},
		"Constant":        {build: one(constantOp)},
		"ConstantOfShape": {build: one(constantOfShapeOp)},
		"Dropout":         {build: one(dropoutOp), perImage: batchedFirst},
		"Expand":          {build: one(expandOp)},
		"Flatten":         {build: one(flattenOp), perImage: flattenPerImage},
		"Gather":          {build: one(gatherOp)},
		"Identity":        {build: one(identityOp), perImage: batchedFirst},
		"Pad":             {build: one(padOp)},
		"Range":           {build: one(rangeOp)},
		"Reshape":         {build: one(reshapeOp), perImage: batchedFirst},
		"Shape":           {build: one(shapeOp)},
		"Slice":           {build: one(sliceOp)},
		"Split":           {build: splitOp},
		"Squeeze":         {build: one(squeezeOp), perImage: batchedFirst},
		"Transpose":       {build: one(transposeOp), perImage: transposePerImage},
		"Unsqueeze":       {build: one(unsqueezeOp), perImage: batchedFirst},

		// Resampling (resize.go).
		"Resize":   {build: one(resizeOp)},
		"Upsample": {build: one(upsampleOp)},

		// Convolution, normalisation and pooling (conv.go).
		"AveragePool":        {build: one(pool(false)), perImage: batchedFirst},
		"BatchNormalization": {build: one(batchNormOp), perImage: batchedFirst},
		"Conv":               {build: one(convOp), perImage: batchedFirst},
		"GlobalAveragePool":  {build: one(globalPool(false)), perImage: batchedFirst},
		"GlobalMaxPool":      {build: one(globalPool(true)), perImage: batchedFirst},
		"MaxPool":            {build: one(pool(true)), perImage: batchedFirst},

		// Matrix products (gemm.go).
		"Gemm":   {build: one(gemmOp), perImage: gemmPerImage},
		"MatMul": {build: one(matmulOp), perImage: matmulPerImage},

		// Reductions (reduce.go).
		"ReduceMean": {build: one(reduceMeanOp)},
	}
}

// SupportedOps returns the ONNX operator types (default domain) the engine
// implements, sorted. An operator's attributes and inputs may still hold
// values it does not implement; loading such a model fails naming them.
func SupportedOps() []string { return slices.Sorted(maps.Keys(opTable)) }

// checkOps returns an error listing every operator of nodes the engine does
// not implement, each once, in order of first use, with its first node and
// the number of nodes using it; nil if there is none.
func checkOps(nodes []onode) error {
	type use struct {
		op    string // with its domain when not the default one
		first string // name of the first node
		count int
	}
	var uses []*use
	byOp := map[string]*use{}
	for _, n := range nodes {
		op := n.op
		if n.domain != "" && n.domain != "ai.onnx" {
			op = fmt.Sprintf("%s in domain %q", n.op, n.domain)
		} else if _, ok := opTable[n.op]; ok {
			continue
		}
		u := byOp[op]
		if u == nil {
			u = &use{op: op, first: n.name}
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
		parts[k] = fmt.Sprintf("%s (node %q", u.op, u.first)
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
