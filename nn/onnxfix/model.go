package onnxfix

// MaxElements bounds the number of elements any tensor or declared shape
// may have (zero dimensions counted as 1), so that no product of
// dimensions, nor its size in bytes, can overflow an int64. The engine
// applies its own, much smaller, limits on top.
const MaxElements = 1 << 40

// MaxOpset is the largest operator-set version accepted.
const MaxOpset = 1000

// Model is the information recorded from an ONNX ModelProto.
type Model struct {
	IRVersion int64
	// Opset is the version of the default ("" or "ai.onnx") operator set.
	Opset int64
	Graph Graph
}

// Graph is the information recorded from the main GraphProto.
type Graph struct {
	Name         string
	Inputs       []Value // graph inputs in order, initializers included
	Outputs      []Value // graph outputs in order
	Initializers []string
	Nodes        []Node // in file order (topological by the ONNX spec)
	// Empty maps the name of each zero-element initializer to its
	// original dimensions; Fix rewrote it to hold one element.
	Empty map[string][]int64
}

// Value is a graph input or output.
type Value struct {
	Name     string
	ElemType int32 // TensorProto.DataType (1 = float32); 0 if not a tensor or not given
	// Dims has one entry per dimension: its size (≥ 0), or -1 where the
	// dimension is named (see DimParams) or unknown.
	Dims      []int64
	DimParams []string // the dim_param of each dimension, "" if none
	HasShape  bool
}

// Node is one NodeProto.
type Node struct {
	Name, OpType, Domain string
	Inputs, Outputs      []string // in order; "" marks an omitted optional input
	// EmptyAttrs maps the name of each zero-element tensor attribute to
	// its original dimensions; Fix rewrote it to hold one element.
	EmptyAttrs map[string][]int64
}
