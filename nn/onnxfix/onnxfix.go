// Package onnxfix is a narrow wire-level pre-pass over ONNX model files,
// run before github.com/owulveryck/onnx-go decodes them.
//
// onnx-go's decoder loses information amt needs and rejects valid models:
// it drops dimensions given by name (dim_param, e.g. a dynamic batch axis
// "N"), it does not report node names, input order with duplicates, or the
// opset, and it fails with "No data found" on tensors with zero elements
// (such as the empty roi input of opset-11 Resize). Fix parses the protobuf
// with google.golang.org/protobuf/encoding/protowire, records that
// information in a [Model], and rewrites every zero-element tensor
// (initializers and tensor attributes of nodes) into a decodable
// one-element tensor. The caller restores the empty meaning from
// [Graph.Empty] and [Node.EmptyAttrs].
package onnxfix

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

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
	ElemType int32 // TensorProto.DataType (1 = float32)
	// Dims has one entry per dimension: its size, or -1 where the
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

// ONNX protobuf field numbers used here.
const (
	modelIRVersion   = 1
	modelGraph       = 7
	modelOpsetImport = 8

	opsetDomain  = 1
	opsetVersion = 2

	graphNode        = 1
	graphName        = 2
	graphInitializer = 5
	graphSparseInit  = 15
	graphInput       = 11
	graphOutput      = 12

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	nodeDomain    = 7

	attrName    = 1
	attrT       = 5
	attrTensors = 10

	tensorDims         = 1
	tensorDataType     = 2
	tensorFloatData    = 4
	tensorInt32Data    = 5
	tensorStringData   = 6
	tensorInt64Data    = 7
	tensorName         = 8
	tensorRawData      = 9
	tensorDoubleData   = 10
	tensorUint64Data   = 11
	tensorExternalData = 13
	tensorDataLocation = 14

	valueName = 1
	valueType = 2

	typeTensor       = 1
	tensorTypeElem   = 1
	tensorTypeShape  = 2
	shapeDim         = 1
	dimValue         = 1
	dimParam         = 2
	dataLocationExtl = 1
)

// elemSize is the byte size of one raw_data element per TensorProto data
// type, as onnx-go reads it (bool uses 8 bytes there).
var elemSize = [...]int{1: 4, 2: 1, 3: 1, 4: 2, 5: 2, 6: 4, 7: 8, 9: 8, 10: 2, 11: 8, 12: 4, 13: 8}

// Fix parses an ONNX model, records its structure and returns a copy of b
// in which every zero-element tensor holds one zero element instead.
// b is not modified.
func Fix(b []byte) ([]byte, *Model, error) {
	m := &Model{}
	out := make([]byte, 0, len(b))
	seenGraph := false
	err := fields(b, func(num protowire.Number, typ protowire.Type, raw, val []byte, v uint64) error {
		switch {
		case num == modelIRVersion && typ == protowire.VarintType:
			m.IRVersion = int64(v)
		case num == modelOpsetImport && typ == protowire.BytesType:
			var domain string
			var version int64
			if err := fields(val, func(num protowire.Number, typ protowire.Type, _, val []byte, v uint64) error {
				switch {
				case num == opsetDomain && typ == protowire.BytesType:
					domain = string(val)
				case num == opsetVersion && typ == protowire.VarintType:
					version = int64(v)
				}
				return nil
			}); err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			if domain == "" || domain == "ai.onnx" {
				m.Opset = version
			}
		case num == modelGraph && typ == protowire.BytesType:
			if seenGraph {
				return errors.New("more than one graph")
			}
			seenGraph = true
			g, err := fixGraph(val, &m.Graph)
			if err != nil {
				return fmt.Errorf("graph: %w", err)
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, g)
			return nil
		}
		out = append(out, raw...)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("onnxfix: model: %w", err)
	}
	if !seenGraph {
		return nil, nil, errors.New("onnxfix: model has no graph")
	}
	if m.Opset == 0 {
		return nil, nil, errors.New("onnxfix: model imports no version of the default (ai.onnx) operator set")
	}
	return out, m, nil
}

func fixGraph(b []byte, g *Graph) ([]byte, error) {
	g.Empty = map[string][]int64{}
	out := make([]byte, 0, len(b))
	err := fields(b, func(num protowire.Number, typ protowire.Type, raw, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		switch num {
		case graphName:
			g.Name = string(val)
		case graphNode:
			var n Node
			nb, err := fixNode(val, &n)
			if err != nil {
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, nb)
			return nil
		case graphInitializer:
			tb, name, dims, empty, err := fixTensor(val)
			if err != nil {
				return fmt.Errorf("initializer %d (%q): %w", len(g.Initializers), name, err)
			}
			g.Initializers = append(g.Initializers, name)
			if empty {
				g.Empty[name] = dims
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, tb)
			return nil
		case graphSparseInit:
			return errors.New("sparse initializers are not supported")
		case graphInput, graphOutput:
			v, err := parseValue(val)
			if err != nil {
				return fmt.Errorf("graph input/output: %w", err)
			}
			if num == graphInput {
				g.Inputs = append(g.Inputs, v)
			} else {
				g.Outputs = append(g.Outputs, v)
			}
		}
		out = append(out, raw...)
		return nil
	})
	return out, err
}

func fixNode(b []byte, n *Node) ([]byte, error) {
	out := make([]byte, 0, len(b))
	err := fields(b, func(num protowire.Number, typ protowire.Type, raw, val []byte, _ uint64) error {
		if typ != protowire.BytesType {
			out = append(out, raw...)
			return nil
		}
		switch num {
		case nodeInput:
			n.Inputs = append(n.Inputs, string(val))
		case nodeOutput:
			n.Outputs = append(n.Outputs, string(val))
		case nodeName:
			n.Name = string(val)
		case nodeOpType:
			n.OpType = string(val)
		case nodeDomain:
			n.Domain = string(val)
		case nodeAttribute:
			ab, err := fixAttribute(val, n)
			if err != nil {
				return err
			}
			out = protowire.AppendTag(out, num, protowire.BytesType)
			out = protowire.AppendBytes(out, ab)
			return nil
		}
		out = append(out, raw...)
		return nil
	})
	return out, err
}

func fixAttribute(b []byte, n *Node) ([]byte, error) {
	var name string
	var tensor []byte
	out := make([]byte, 0, len(b))
	err := fields(b, func(num protowire.Number, typ protowire.Type, raw, val []byte, _ uint64) error {
		switch {
		case num == attrName && typ == protowire.BytesType:
			name = string(val)
		case num == attrT && typ == protowire.BytesType:
			tensor = val
			return nil // appended below once the name is known
		}
		out = append(out, raw...)
		return nil
	})
	if err != nil || tensor == nil {
		return out, err
	}
	tb, _, dims, empty, err := fixTensor(tensor)
	if err != nil {
		return nil, fmt.Errorf("attribute %q: %w", name, err)
	}
	if empty {
		if n.EmptyAttrs == nil {
			n.EmptyAttrs = map[string][]int64{}
		}
		n.EmptyAttrs[name] = dims
	}
	out = protowire.AppendTag(out, attrT, protowire.BytesType)
	out = protowire.AppendBytes(out, tb)
	return out, nil
}

// fixTensor returns the tensor unchanged unless it has zero elements, in
// which case it returns a one-element zero tensor of the same data type.
func fixTensor(b []byte) (out []byte, name string, dims []int64, empty bool, err error) {
	var dtype uint64
	var raw []byte
	external := false
	err = fields(b, func(num protowire.Number, typ protowire.Type, _, val []byte, v uint64) error {
		switch {
		case num == tensorRawData && typ == protowire.BytesType:
			raw = val
		case num == tensorName && typ == protowire.BytesType:
			name = string(val)
		case num == tensorDataType && typ == protowire.VarintType:
			dtype = v
		case num == tensorDims && typ == protowire.VarintType:
			dims = append(dims, int64(v))
		case num == tensorDims && typ == protowire.BytesType: // packed
			for len(val) > 0 {
				d, n := protowire.ConsumeVarint(val)
				if n < 0 {
					return protowire.ParseError(n)
				}
				dims = append(dims, int64(d))
				val = val[n:]
			}
		case num == tensorDataLocation && typ == protowire.VarintType:
			external = v == dataLocationExtl
		case num == tensorExternalData:
			external = true
		}
		return nil
	})
	if err != nil {
		return nil, name, nil, false, err
	}
	if external {
		return nil, name, nil, false, errors.New("tensors stored as external data are not supported")
	}
	for _, d := range dims {
		if d == 0 {
			empty = true
		}
	}
	if !empty {
		if dtype == dtypeBool && raw != nil {
			return boolToInt32Data(b, raw), name, dims, false, nil
		}
		return b, name, dims, false, nil
	}
	size := 0
	if dtype < uint64(len(elemSize)) {
		size = elemSize[dtype]
	}
	if size == 0 {
		return nil, name, dims, true, fmt.Errorf("empty tensor of unsupported data type %d", dtype)
	}
	// Rebuild: every field but dims and data, then dims [1] and one raw element.
	out = make([]byte, 0, len(b)+16)
	err = fields(b, func(num protowire.Number, _ protowire.Type, raw, _ []byte, _ uint64) error {
		switch num {
		case tensorDims, tensorFloatData, tensorInt32Data, tensorStringData, tensorInt64Data,
			tensorRawData, tensorDoubleData, tensorUint64Data:
			return nil
		}
		out = append(out, raw...)
		return nil
	})
	out = protowire.AppendTag(out, tensorDims, protowire.VarintType)
	out = protowire.AppendVarint(out, 1)
	out = protowire.AppendTag(out, tensorRawData, protowire.BytesType)
	out = protowire.AppendBytes(out, make([]byte, size))
	return out, name, dims, true, err
}

// dtypeBool is TensorProto.DataType BOOL.
const dtypeBool = 9

// boolToInt32Data rewrites a bool tensor whose values are in raw_data (one
// byte each, as the ONNX spec and every exporter store them; onnx-go reads
// 8 bytes per value there and fails) to hold them in int32_data, which
// onnx-go reads correctly.
func boolToInt32Data(b, raw []byte) []byte {
	out := make([]byte, 0, len(b)+len(raw))
	_ = fields(b, func(num protowire.Number, _ protowire.Type, field, _ []byte, _ uint64) error {
		if num != tensorRawData {
			out = append(out, field...)
		}
		return nil
	}) // b parsed without error in fixTensor
	packed := make([]byte, 0, len(raw))
	for _, v := range raw {
		x := uint64(0)
		if v != 0 {
			x = 1
		}
		packed = protowire.AppendVarint(packed, x)
	}
	out = protowire.AppendTag(out, tensorInt32Data, protowire.BytesType)
	return protowire.AppendBytes(out, packed)
}

func parseValue(b []byte) (Value, error) {
	var v Value
	err := fields(b, func(num protowire.Number, typ protowire.Type, _, val []byte, _ uint64) error {
		switch {
		case num == valueName && typ == protowire.BytesType:
			v.Name = string(val)
		case num == valueType && typ == protowire.BytesType:
			return fields(val, func(num protowire.Number, typ protowire.Type, _, val []byte, _ uint64) error {
				if num != typeTensor || typ != protowire.BytesType {
					return nil
				}
				return fields(val, func(num protowire.Number, typ protowire.Type, _, val []byte, x uint64) error {
					switch {
					case num == tensorTypeElem && typ == protowire.VarintType:
						v.ElemType = int32(x)
					case num == tensorTypeShape && typ == protowire.BytesType:
						v.HasShape = true
						return fields(val, func(num protowire.Number, typ protowire.Type, _, val []byte, _ uint64) error {
							if num != shapeDim || typ != protowire.BytesType {
								return nil
							}
							d, p := int64(-1), ""
							err := fields(val, func(num protowire.Number, typ protowire.Type, _, val []byte, x uint64) error {
								switch {
								case num == dimValue && typ == protowire.VarintType:
									d = int64(x)
								case num == dimParam && typ == protowire.BytesType:
									p = string(val)
								}
								return nil
							})
							v.Dims = append(v.Dims, d)
							v.DimParams = append(v.DimParams, p)
							return err
						})
					}
					return nil
				})
			})
		}
		return nil
	})
	return v, err
}

// fields calls f for every field of the message b with the field's raw
// bytes (tag included), its bytes value (BytesType) and its varint value
// (VarintType).
func fields(b []byte, f func(num protowire.Number, typ protowire.Type, raw, val []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("malformed protobuf: %w", protowire.ParseError(n))
		}
		var val []byte
		var v uint64
		var m int
		switch typ {
		case protowire.BytesType:
			val, m = protowire.ConsumeBytes(b[n:])
		case protowire.VarintType:
			v, m = protowire.ConsumeVarint(b[n:])
		default:
			m = protowire.ConsumeFieldValue(num, typ, b[n:])
		}
		if m < 0 {
			return fmt.Errorf("malformed protobuf field %d: %w", num, protowire.ParseError(m))
		}
		if err := f(num, typ, b[:n+m], val, v); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}
