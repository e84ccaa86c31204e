// Package onnxfix is the wire-level gate every ONNX model file passes
// before github.com/owulveryck/onnx-go decodes it.
//
// onnx-go's decoder loses information amt needs, rejects valid models and
// panics or exhausts memory on hostile ones: it drops dimensions given by
// name (dim_param, e.g. a dynamic batch axis "N"); it does not report node
// names, input order with duplicates, or the opset; it fails with "No data
// found" on tensors with zero elements (such as the empty roi input of
// opset-11 Resize); it allocates a tensor of every declared graph input and
// output shape (a 112-byte file declaring [1,3,20000,20000] costs 4.8 GB);
// and it panics when a tensor's stored data does not match its dimensions
// or a dimension is negative.
//
// Fix parses the protobuf with google.golang.org/protobuf/encoding/protowire,
// checks it and records what amt needs in a [Model], and re-encodes the
// part of it that amt reads, in a form onnx-go decodes safely:
//
//   - only the model's IR version, operator sets and graph; the graph's
//     nodes, initializers and the names of its inputs and outputs (their
//     types are recorded here, not passed on, so onnx-go allocates
//     nothing for them; value_info is dropped); nodes' inputs, outputs,
//     name, operator, domain and attributes. Doc strings, metadata,
//     training info and model-local functions are dropped.
//   - every tensor (initializer or attribute) has a supported data type
//     (float, double, int32, int64, bool), non-negative dimensions whose
//     product stays below [MaxElements], and exactly as many stored values
//     as its dimensions declare; tensors stored as external data,
//     segmented or sparse tensors are refused. Bool tensors are passed on
//     as int32_data (onnx-go reads raw bools as 8 bytes each).
//   - a zero-element tensor is rewritten into a decodable one-element zero
//     tensor; the caller restores the empty meaning from [Graph.Empty] and
//     [Node.EmptyAttrs].
//   - attributes holding graphs (If, Loop, Scan bodies), lists of tensors,
//     sparse tensors or types are passed on without their value (type
//     UNDEFINED), so nothing is decoded recursively; an attribute without
//     a type gets the one its value field implies.
//   - every string is valid UTF-8, every known field has its wire type,
//     and no singular message field occurs twice (onnx-go would merge
//     them).
//
// Any other malformation is an error naming the place; a file that is not
// a protobuf at all, or is cut short, is reported as "truncated or not an
// ONNX file".
package onnxfix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

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
	graphInput       = 11
	graphOutput      = 12
	graphSparseInit  = 15

	nodeInput     = 1
	nodeOutput    = 2
	nodeName      = 3
	nodeOpType    = 4
	nodeAttribute = 5
	nodeDomain    = 7

	attrName    = 1
	attrF       = 2
	attrI       = 3
	attrS       = 4
	attrT       = 5
	attrG       = 6
	attrFloats  = 7
	attrInts    = 8
	attrStrings = 9
	attrTensors = 10
	attrGraphs  = 11
	attrTP      = 14
	attrTPs     = 15
	attrType    = 20
	attrSparseT = 22
	attrSparseS = 23

	tensorDims         = 1
	tensorDataType     = 2
	tensorSegment      = 3
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

	typeTensor      = 1
	tensorTypeElem  = 1
	tensorTypeShape = 2
	shapeDim        = 1
	dimValue        = 1
	dimParam        = 2

	dataLocationExternal = 1
)

// AttributeProto.AttributeType values.
const (
	atUndefined = 0
	atFloat     = 1
	atInt       = 2
	atString    = 3
	atTensor    = 4
	atGraph     = 5
	atFloats    = 6
	atInts      = 7
	atStrings   = 8
	atTensors   = 9
	atGraphs    = 10
	atSparse    = 11
	atSparses   = 12
	atTypeProto = 13
	atTPs       = 14
)

// TensorProto.DataType values the engine supports.
const (
	dtFloat  = 1
	dtInt32  = 6
	dtInt64  = 7
	dtBool   = 9
	dtDouble = 11
)

var dataTypeNames = map[uint64]string{
	0: "UNDEFINED", 1: "FLOAT", 2: "UINT8", 3: "INT8", 4: "UINT16", 5: "INT16", 6: "INT32",
	7: "INT64", 8: "STRING", 9: "BOOL", 10: "FLOAT16", 11: "DOUBLE", 12: "UINT32", 13: "UINT64",
	14: "COMPLEX64", 15: "COMPLEX128", 16: "BFLOAT16", 17: "FLOAT8E4M3FN", 18: "FLOAT8E4M3FNUZ",
	19: "FLOAT8E5M2", 20: "FLOAT8E5M2FNUZ", 21: "UINT4", 22: "INT4", 23: "FLOAT4E2M1",
}

func dataTypeName(t uint64) string {
	if s, ok := dataTypeNames[t]; ok {
		return fmt.Sprintf("%s (%d)", s, t)
	}
	return fmt.Sprintf("%d", t)
}

// WireError is a malformed protobuf: the file is cut short or is not a
// protobuf message at all.
type WireError struct {
	Field protowire.Number // the field being read, 0 if its tag
	Err   error
}

func (e *WireError) Error() string {
	// protowire's messages start with "proto:" and a no-break space.
	msg := strings.TrimLeft(strings.TrimPrefix(e.Err.Error(), "proto:"), " \u00a0")
	if e.Field == 0 {
		return "malformed protobuf: " + msg
	}
	return fmt.Sprintf("malformed protobuf field %d: %s", e.Field, msg)
}

func (e *WireError) Unwrap() error { return e.Err }

// Fix parses and checks an ONNX model, records its structure and returns
// the re-encoding of it described in the package documentation.
// b is not modified.
func Fix(b []byte) ([]byte, *Model, error) {
	out, m, err := fix(b)
	if err != nil {
		var we *WireError
		if errors.As(err, &we) {
			return nil, nil, fmt.Errorf("truncated or not an ONNX file (%w)", err)
		}
		return nil, nil, err
	}
	return out, m, nil
}

func fix(b []byte) ([]byte, *Model, error) {
	m := &Model{}
	var graph []byte
	seenGraph := false
	var opsets []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case modelIRVersion:
			if err := f.want(protowire.VarintType, "ir_version"); err != nil {
				return err
			}
			m.IRVersion = int64(f.v)
		case modelGraph:
			if err := f.want(protowire.BytesType, "graph"); err != nil {
				return err
			}
			if seenGraph {
				return errors.New("the model has more than one graph")
			}
			seenGraph = true
			graph = f.val
		case modelOpsetImport:
			if err := f.want(protowire.BytesType, "opset_import"); err != nil {
				return err
			}
			domain, version, err := parseOpset(f.val)
			if err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			if domain == "" || domain == "ai.onnx" {
				m.Opset = version
			}
			opsets = appendMsg(opsets, modelOpsetImport, appendVarintField(appendString(nil, opsetDomain, domain), opsetVersion, uint64(version)))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !seenGraph {
		return nil, nil, errors.New("truncated or not an ONNX file: it has no graph")
	}
	if m.Opset == 0 {
		return nil, nil, errors.New("the model imports no version of the default (ai.onnx) operator set")
	}
	if m.Opset < 1 || m.Opset > MaxOpset {
		return nil, nil, fmt.Errorf("opset %d of the default (ai.onnx) operator set is not a valid version (1 to %d)", m.Opset, MaxOpset)
	}
	g, err := fixGraph(graph, &m.Graph)
	if err != nil {
		return nil, nil, fmt.Errorf("graph: %w", err)
	}
	out := appendVarintField(nil, modelIRVersion, uint64(m.IRVersion))
	out = append(out, opsets...)
	out = appendMsg(out, modelGraph, g)
	return out, m, nil
}

func parseOpset(b []byte) (domain string, version int64, err error) {
	err = fields(b, func(f field) error {
		switch f.num {
		case opsetDomain:
			s, err := f.str("domain")
			domain = s
			return err
		case opsetVersion:
			version = int64(f.v)
			return f.want(protowire.VarintType, "version")
		}
		return nil
	})
	return
}

func fixGraph(b []byte, g *Graph) ([]byte, error) {
	g.Empty = map[string][]int64{}
	var out, ins, outs []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case graphName:
			s, err := f.str("name")
			g.Name = s
			return err
		case graphNode:
			if err := f.want(protowire.BytesType, "node"); err != nil {
				return err
			}
			var n Node
			nb, err := fixNode(f.val, &n)
			if err != nil {
				if n.Name != "" {
					return fmt.Errorf("node %d (%q): %w", len(g.Nodes), n.Name, err)
				}
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
			out = appendMsg(out, graphNode, nb)
		case graphInitializer:
			if err := f.want(protowire.BytesType, "initializer"); err != nil {
				return err
			}
			t, err := parseTensor(f.val)
			if err != nil {
				if t.name != "" {
					return fmt.Errorf("initializer %q: %w", t.name, err)
				}
				return fmt.Errorf("initializer %d: %w", len(g.Initializers), err)
			}
			if t.name == "" {
				return fmt.Errorf("initializer %d has no name", len(g.Initializers))
			}
			g.Initializers = append(g.Initializers, t.name)
			if t.empty() {
				g.Empty[t.name] = t.dims
			}
			out = appendMsg(out, graphInitializer, t.encode())
		case graphSparseInit:
			return errors.New("sparse initializers are not supported")
		case graphInput, graphOutput:
			what := "input"
			if f.num == graphOutput {
				what = "output"
			}
			if err := f.want(protowire.BytesType, what); err != nil {
				return err
			}
			v, err := parseValue(f.val)
			if err != nil {
				if v.Name != "" {
					return fmt.Errorf("%s %q: %w", what, v.Name, err)
				}
				return fmt.Errorf("%s: %w", what, err)
			}
			// Only the name is passed on: onnx-go would allocate a tensor
			// of the declared shape.
			vb := appendString(nil, valueName, v.Name)
			if f.num == graphInput {
				g.Inputs = append(g.Inputs, v)
				ins = appendMsg(ins, graphInput, vb)
			} else {
				g.Outputs = append(g.Outputs, v)
				outs = appendMsg(outs, graphOutput, vb)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, ins...)
	return append(out, outs...), nil
}

func fixNode(b []byte, n *Node) ([]byte, error) {
	var out []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case nodeInput:
			s, err := f.str(fmt.Sprintf("input %d", len(n.Inputs)))
			n.Inputs = append(n.Inputs, s)
			if err == nil {
				out = appendString(out, nodeInput, s)
			}
			return err
		case nodeOutput:
			s, err := f.str(fmt.Sprintf("output %d", len(n.Outputs)))
			n.Outputs = append(n.Outputs, s)
			if err == nil {
				out = appendString(out, nodeOutput, s)
			}
			return err
		case nodeName:
			s, err := f.str("name")
			n.Name = s
			return err
		case nodeOpType:
			s, err := f.str("op_type")
			n.OpType = s
			return err
		case nodeDomain:
			s, err := f.str("domain")
			n.Domain = s
			return err
		case nodeAttribute:
			if err := f.want(protowire.BytesType, "attribute"); err != nil {
				return err
			}
			ab, err := fixAttribute(f.val, n)
			if err != nil {
				return err
			}
			out = appendMsg(out, nodeAttribute, ab)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n.OpType == "" {
		return nil, errors.New("no op_type")
	}
	out = appendString(out, nodeName, n.Name)
	out = appendString(out, nodeOpType, n.OpType)
	if n.Domain != "" {
		out = appendString(out, nodeDomain, n.Domain)
	}
	return out, nil
}

// fixAttribute checks an AttributeProto and re-encodes its name, its type
// and the value field of that type.
func fixAttribute(b []byte, n *Node) ([]byte, error) {
	var (
		name       string
		typ        uint64
		hasType    bool
		f32        uint32
		i64        uint64
		s          []byte
		t          *tensorMsg
		floats     []byte // packed fixed32
		ints       []byte // packed varints
		strs       [][]byte
		present    = map[uint64]bool{} // attribute types whose value field occurs
		singularTs int
	)
	err := fields(b, func(f field) error {
		switch f.num {
		case attrName:
			v, err := f.str("name")
			name = v
			return err
		case attrType:
			typ, hasType = f.v, true
			return f.want(protowire.VarintType, "type")
		case attrF:
			f32 = uint32(f.v)
			present[atFloat] = true
			return f.want(protowire.Fixed32Type, "f")
		case attrI:
			i64 = f.v
			present[atInt] = true
			return f.want(protowire.VarintType, "i")
		case attrS:
			s = f.val
			present[atString] = true
			return f.want(protowire.BytesType, "s")
		case attrT:
			if err := f.want(protowire.BytesType, "t"); err != nil {
				return err
			}
			if singularTs++; singularTs > 1 {
				return errors.New("field t occurs twice")
			}
			tt, err := parseTensor(f.val)
			if err != nil {
				return err
			}
			t = &tt
			present[atTensor] = true
		case attrFloats:
			present[atFloats] = true
			return f.fixed32s("floats", func(v uint32) { floats = binary.LittleEndian.AppendUint32(floats, v) })
		case attrInts:
			present[atInts] = true
			return f.varints("ints", func(v uint64) { ints = protowire.AppendVarint(ints, v) })
		case attrStrings:
			present[atStrings] = true
			strs = append(strs, f.val)
			return f.want(protowire.BytesType, "strings")
		case attrG:
			present[atGraph] = true
		case attrTensors:
			present[atTensors] = true
		case attrGraphs:
			present[atGraphs] = true
		case attrSparseT:
			present[atSparse] = true
		case attrSparseS:
			present[atSparses] = true
		case attrTP:
			present[atTypeProto] = true
		case attrTPs:
			present[atTPs] = true
		}
		return nil
	})
	if name != "" {
		if err != nil {
			return nil, fmt.Errorf("attribute %q: %w", name, err)
		}
	} else if err != nil {
		return nil, fmt.Errorf("attribute: %w", err)
	} else {
		return nil, errors.New("attribute without a name")
	}
	if !hasType || typ == atUndefined {
		// IR version 1 files may omit the type: take the one field given.
		if len(present) == 1 {
			for k := range present {
				typ = k
			}
		}
	}
	out := appendString(nil, attrName, name)
	switch typ {
	case atFloat:
		out = protowire.AppendTag(out, attrF, protowire.Fixed32Type)
		out = protowire.AppendFixed32(out, f32)
	case atInt:
		out = appendVarintField(out, attrI, i64)
	case atString:
		out = appendBytes(out, attrS, s)
	case atTensor:
		if t == nil {
			return nil, fmt.Errorf("attribute %q: of type TENSOR but holds no tensor", name)
		}
		if t.empty() {
			if n.EmptyAttrs == nil {
				n.EmptyAttrs = map[string][]int64{}
			}
			n.EmptyAttrs[name] = t.dims
		}
		out = appendMsg(out, attrT, t.encode())
	case atFloats:
		out = appendBytes(out, attrFloats, floats)
	case atInts:
		out = appendBytes(out, attrInts, ints)
	case atStrings:
		for _, v := range strs {
			out = appendBytes(out, attrStrings, v)
		}
	default:
		// Graphs, tensor lists, sparse tensors, types, or nothing: passed on
		// without a value; the engine reports the attribute (or the
		// operator) as unsupported.
		typ = atUndefined
	}
	return appendVarintField(out, attrType, typ), nil
}

// tensorMsg is a checked TensorProto.
type tensorMsg struct {
	name  string
	dtype uint64
	dims  []int64
	n     int64 // number of elements
	// The data, in the one representation given: raw little-endian bytes,
	// or the values of the typed field (fixed32/fixed64 bit patterns or
	// varints).
	raw    []byte
	values []uint64
	typed  bool // values holds the data (else raw)
}

func (t *tensorMsg) empty() bool { return t.n == 0 }

// parseTensor checks a TensorProto: supported data type, valid dimensions,
// data stored inline, and exactly as many values stored as declared.
func parseTensor(b []byte) (tensorMsg, error) {
	var t tensorMsg
	var hasRaw bool
	var dataFields []string // the data fields present
	note := func(name string) {
		for _, s := range dataFields {
			if s == name {
				return
			}
		}
		dataFields = append(dataFields, name)
	}
	var badDim error
	err := fields(b, func(f field) error {
		switch f.num {
		case tensorName:
			s, err := f.str("name")
			t.name = s
			return err
		case tensorDataType:
			t.dtype = f.v
			return f.want(protowire.VarintType, "data_type")
		case tensorDims:
			return f.varints("dims", func(v uint64) {
				if int64(v) < 0 && badDim == nil {
					badDim = fmt.Errorf("dimension %d is negative (%d)", len(t.dims), int64(v))
				}
				t.dims = append(t.dims, int64(v))
			})
		case tensorSegment:
			return errors.New("segmented tensors are not supported")
		case tensorExternalData:
			return errors.New("tensors stored as external data are not supported (the model must hold its weights)")
		case tensorDataLocation:
			if f.v == dataLocationExternal {
				return errors.New("tensors stored as external data are not supported (the model must hold its weights)")
			}
			return f.want(protowire.VarintType, "data_location")
		case tensorRawData:
			if err := f.want(protowire.BytesType, "raw_data"); err != nil {
				return err
			}
			t.raw, hasRaw = f.val, true
			note("raw_data")
		case tensorFloatData:
			note("float_data")
			return f.fixed32s("float_data", func(v uint32) { t.values = append(t.values, uint64(v)) })
		case tensorDoubleData:
			note("double_data")
			return f.fixed64s("double_data", func(v uint64) { t.values = append(t.values, v) })
		case tensorInt32Data:
			note("int32_data")
			return f.varints("int32_data", func(v uint64) { t.values = append(t.values, v) })
		case tensorInt64Data:
			note("int64_data")
			return f.varints("int64_data", func(v uint64) { t.values = append(t.values, v) })
		case tensorStringData:
			note("string_data")
		case tensorUint64Data:
			note("uint64_data")
		}
		return nil
	})
	if err != nil {
		return t, err
	}
	if badDim != nil {
		return t, badDim
	}
	var want string // the typed data field of the type
	var size int64  // bytes per element in raw_data
	switch t.dtype {
	case dtFloat:
		want, size = "float_data", 4
	case dtDouble:
		want, size = "double_data", 8
	case dtInt32:
		want, size = "int32_data", 4
	case dtInt64:
		want, size = "int64_data", 8
	case dtBool:
		want, size = "int32_data", 1
	default:
		return t, fmt.Errorf("data type %s is not supported (FLOAT, DOUBLE, INT32, INT64 and BOOL are)", dataTypeName(t.dtype))
	}
	n, err := countElements(t.dims)
	if err != nil {
		return t, err
	}
	t.n = n
	switch {
	case len(dataFields) > 1:
		return t, fmt.Errorf("stores its data in more than one field (%s)", strings.Join(dataFields, ", "))
	case len(dataFields) == 1 && dataFields[0] != "raw_data" && dataFields[0] != want:
		return t, fmt.Errorf("%s tensor stores %s (want raw_data or %s)", dataTypeName(t.dtype), dataFields[0], want)
	}
	var stored int64
	if hasRaw {
		if int64(len(t.raw))%size != 0 {
			return t, fmt.Errorf("raw_data has %d bytes, not a multiple of the %d-byte %s elements", len(t.raw), size, dataTypeName(t.dtype))
		}
		stored = int64(len(t.raw)) / size
	} else {
		stored = int64(len(t.values))
		t.typed = true
	}
	if stored != n {
		return t, fmt.Errorf("dimensions %v declare %d values, the tensor stores %d", t.dims, n, stored)
	}
	if t.dtype == dtBool {
		// onnx-go reads raw bools as 8 bytes each; pass them as int32_data.
		if hasRaw {
			t.values = make([]uint64, len(t.raw))
			for i, v := range t.raw {
				t.values[i] = uint64(v)
			}
			t.raw, t.typed = nil, true
		}
		for i, v := range t.values {
			if v != 0 {
				t.values[i] = 1
			}
		}
	}
	return t, nil
}

// countElements returns the number of elements of a tensor of the given
// dimensions, which must be non-negative, failing when it (with zero
// dimensions counted as 1) exceeds MaxElements.
func countElements(dims []int64) (int64, error) {
	n, bound := int64(1), int64(1)
	for _, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("dimensions %v: negative dimension %d", dims, d)
		}
		if d > MaxElements || bound > MaxElements/max(d, 1) {
			return 0, fmt.Errorf("dimensions %v declare more than %d values", dims, int64(MaxElements))
		}
		bound *= max(d, 1)
		n *= d
	}
	return n, nil
}

// encode returns the tensor as onnx-go decodes it: its name, data type,
// dimensions and data; a zero-element tensor becomes a one-element zero
// tensor of the same type.
func (t *tensorMsg) encode() []byte {
	var out []byte
	dims, raw, values, typed := t.dims, t.raw, t.values, t.typed
	if t.empty() {
		dims, raw, values, typed = []int64{1}, nil, []uint64{0}, true
	}
	var pd []byte
	for _, d := range dims {
		pd = protowire.AppendVarint(pd, uint64(d))
	}
	if len(pd) > 0 {
		out = appendBytes(out, tensorDims, pd)
	}
	out = appendVarintField(out, tensorDataType, t.dtype)
	out = appendString(out, tensorName, t.name)
	if !typed {
		return appendBytes(out, tensorRawData, raw)
	}
	var data []byte
	var num protowire.Number
	switch t.dtype {
	case dtFloat:
		num = tensorFloatData
		for _, v := range values {
			data = binary.LittleEndian.AppendUint32(data, uint32(v))
		}
	case dtDouble:
		num = tensorDoubleData
		for _, v := range values {
			data = binary.LittleEndian.AppendUint64(data, v)
		}
	case dtInt64:
		num = tensorInt64Data
		for _, v := range values {
			data = protowire.AppendVarint(data, v)
		}
	default: // int32, bool
		num = tensorInt32Data
		for _, v := range values {
			data = protowire.AppendVarint(data, uint64(int64(int32(v))))
		}
	}
	return appendBytes(out, num, data)
}

func parseValue(b []byte) (Value, error) {
	var v Value
	err := fields(b, func(f field) error {
		switch f.num {
		case valueName:
			s, err := f.str("name")
			v.Name = s
			return err
		case valueType:
			if err := f.want(protowire.BytesType, "type"); err != nil {
				return err
			}
			return fields(f.val, func(f field) error {
				if f.num != typeTensor {
					return nil // sequence, map, optional or sparse: not a tensor
				}
				if err := f.want(protowire.BytesType, "tensor_type"); err != nil {
					return err
				}
				return fields(f.val, func(f field) error {
					switch f.num {
					case tensorTypeElem:
						v.ElemType = int32(f.v)
						if int64(f.v) != int64(v.ElemType) {
							return fmt.Errorf("element type %d is not a data type", f.v)
						}
						return f.want(protowire.VarintType, "elem_type")
					case tensorTypeShape:
						if err := f.want(protowire.BytesType, "shape"); err != nil {
							return err
						}
						v.HasShape = true
						v.Dims, v.DimParams = nil, nil
						return fields(f.val, func(f field) error {
							if f.num != shapeDim {
								return nil
							}
							if err := f.want(protowire.BytesType, "dim"); err != nil {
								return err
							}
							d, p := int64(-1), ""
							err := fields(f.val, func(f field) error {
								switch f.num {
								case dimValue:
									d, p = int64(f.v), ""
									if err := f.want(protowire.VarintType, "dim_value"); err != nil {
										return err
									}
									if d < 0 {
										return fmt.Errorf("dimension %d has size %d", len(v.Dims), d)
									}
								case dimParam:
									s, err := f.str("dim_param")
									d, p = -1, s
									return err
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
	if err != nil {
		return v, err
	}
	fixed := make([]int64, 0, len(v.Dims))
	for _, d := range v.Dims {
		if d >= 0 {
			fixed = append(fixed, d)
		}
	}
	if _, err := countElements(fixed); err != nil {
		return v, err
	}
	return v, nil
}

// field is one field of a protobuf message.
type field struct {
	num protowire.Number
	typ protowire.Type
	val []byte // BytesType
	v   uint64 // VarintType, Fixed32Type, Fixed64Type
}

var wireTypeNames = map[protowire.Type]string{
	protowire.VarintType: "varint", protowire.Fixed32Type: "fixed32", protowire.Fixed64Type: "fixed64",
	protowire.BytesType: "bytes", protowire.StartGroupType: "group", protowire.EndGroupType: "end group",
}

// want fails unless f has wire type typ.
func (f field) want(typ protowire.Type, name string) error {
	if f.typ != typ {
		return &WireError{f.num, fmt.Errorf("%s has wire type %s, want %s", name, wireTypeNames[f.typ], wireTypeNames[typ])}
	}
	return nil
}

// str returns a string field, which must be valid UTF-8.
func (f field) str(name string) (string, error) {
	if err := f.want(protowire.BytesType, name); err != nil {
		return "", err
	}
	if !utf8.Valid(f.val) {
		return "", fmt.Errorf("%s %q is not valid UTF-8", name, f.val)
	}
	return string(f.val), nil
}

// varints calls add for each value of a repeated varint field, packed or not.
func (f field) varints(name string, add func(uint64)) error {
	switch f.typ {
	case protowire.VarintType:
		add(f.v)
		return nil
	case protowire.BytesType:
		for b := f.val; len(b) > 0; {
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return &WireError{f.num, protowire.ParseError(n)}
			}
			add(v)
			b = b[n:]
		}
		return nil
	}
	return f.want(protowire.VarintType, name)
}

// fixed32s calls add for each value of a repeated fixed32 field, packed or not.
func (f field) fixed32s(name string, add func(uint32)) error {
	switch f.typ {
	case protowire.Fixed32Type:
		add(uint32(f.v))
		return nil
	case protowire.BytesType:
		if len(f.val)%4 != 0 {
			return &WireError{f.num, fmt.Errorf("packed %s has %d bytes, not a multiple of 4", name, len(f.val))}
		}
		for b := f.val; len(b) > 0; b = b[4:] {
			add(binary.LittleEndian.Uint32(b))
		}
		return nil
	}
	return f.want(protowire.Fixed32Type, name)
}

// fixed64s calls add for each value of a repeated fixed64 field, packed or not.
func (f field) fixed64s(name string, add func(uint64)) error {
	switch f.typ {
	case protowire.Fixed64Type:
		add(f.v)
		return nil
	case protowire.BytesType:
		if len(f.val)%8 != 0 {
			return &WireError{f.num, fmt.Errorf("packed %s has %d bytes, not a multiple of 8", name, len(f.val))}
		}
		for b := f.val; len(b) > 0; b = b[8:] {
			add(binary.LittleEndian.Uint64(b))
		}
		return nil
	}
	return f.want(protowire.Fixed64Type, name)
}

// fields calls f for every field of the message b.
func fields(b []byte, f func(field) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return &WireError{0, protowire.ParseError(n)}
		}
		b = b[n:]
		fl := field{num: num, typ: typ}
		var m int
		switch typ {
		case protowire.BytesType:
			fl.val, m = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			fl.v, m = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var v uint32
			v, m = protowire.ConsumeFixed32(b)
			fl.v = uint64(v)
		case protowire.Fixed64Type:
			fl.v, m = protowire.ConsumeFixed64(b)
		default:
			// Groups (deprecated, never used by ONNX) and invalid types.
			m = protowire.ConsumeFieldValue(num, typ, b)
			if m >= 0 {
				return &WireError{num, fmt.Errorf("wire type %s, which ONNX does not use", wireTypeNames[typ])}
			}
		}
		if m < 0 {
			return &WireError{num, protowire.ParseError(m)}
		}
		if err := f(fl); err != nil {
			return err
		}
		b = b[m:]
	}
	return nil
}

func appendVarintField(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func appendString(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendMsg(b []byte, num protowire.Number, m []byte) []byte { return appendBytes(b, num, m) }
