// Package onnxtest builds small ONNX models in memory for tests of the
// engine and its pre-pass. It writes the protobuf wire format directly, so
// it can also produce what onnx-go rejects (e.g. empty tensors) and, with
// the Extra fields, DataType, Raw and RawAttr, malformed or hostile files
// (see Hostile).
package onnxtest

import (
	"cmp"
	"encoding/binary"
	"math"

	"github.com/amt-dev/amt/nn/internal/pbwire"
	"google.golang.org/protobuf/encoding/protowire"
)

// Model is an ONNX model with one graph.
type Model struct {
	Opset   int64
	Nodes   []Node
	Inits   []Tensor
	Inputs  []Value
	Outputs []Value
	// Extra and GraphExtra are appended as is to the encoded ModelProto
	// and GraphProto.
	Extra, GraphExtra []byte
}

// Node is a graph node.
type Node struct {
	Name, Op string
	Domain   string // operator domain; "" for the default one
	In, Out  []string
	Attrs    []Attr
	Extra    []byte // appended as is to the encoded NodeProto
}

// Value is a graph input or output. Each entry of Dims is an int
// (dim_value) or a string (dim_param); nil Dims declare no shape.
type Value struct {
	Name     string
	Dims     []any
	ElemType int32 // TensorProto data type; 0 means FLOAT
}

// Tensor is an initializer or tensor attribute, float32 (F) or int64 (I).
// A zero in Dims makes an empty tensor.
type Tensor struct {
	Name  string
	Dims  []int64
	F     []float32
	I     []int64
	IsInt bool
	// DataType, if not 0, is written instead of FLOAT or INT64; Raw, if
	// not nil, is written as raw_data instead of F or I; Extra is appended
	// as is to the encoded TensorProto.
	DataType int32
	Raw      []byte
	Extra    []byte
}

// Attr is a node attribute; build it with the helpers below.
type Attr struct {
	raw  []byte // the encoded AttributeProto, for RawAttr
	name string
	kind int
	i    int64
	ints []int64
	f    float32
	fs   []float32
	s    string
	t    *Tensor
}

// Attribute constructors.
func Int(name string, v int64) Attr         { return Attr{name: name, kind: 2, i: v} }
func Ints(name string, v ...int64) Attr     { return Attr{name: name, kind: 7, ints: v} }
func Float(name string, v float32) Attr     { return Attr{name: name, kind: 1, f: v} }
func Floats(name string, v ...float32) Attr { return Attr{name: name, kind: 6, fs: v} }
func String(name, v string) Attr            { return Attr{name: name, kind: 3, s: v} }
func TensorAttr(name string, t Tensor) Attr { return Attr{name: name, kind: 4, t: &t} }

// RawAttr is an attribute whose encoded AttributeProto is b.
func RawAttr(b []byte) Attr { return Attr{raw: b} }

// Floats32 returns a float32 tensor.
func F32(name string, dims []int64, v ...float32) Tensor {
	return Tensor{Name: name, Dims: dims, F: v}
}

// I64 returns an int64 tensor.
func I64(name string, dims []int64, v ...int64) Tensor {
	return Tensor{Name: name, Dims: dims, I: v, IsInt: true}
}

// Bool returns a bool tensor holding v (0 or 1), stored one byte per value
// in raw_data as exporters write it.
func Bool(name string, dims []int64, v ...int64) Tensor {
	raw := make([]byte, len(v))
	for k, x := range v {
		raw[k] = byte(x)
	}
	return Tensor{Name: name, Dims: dims, DataType: 9, Raw: raw}
}

// Bytes encodes the model.
func (m Model) Bytes() []byte {
	var g []byte
	for _, n := range m.Nodes {
		g = pbwire.Bytes(g, 1, n.bytes())
	}
	g = pbwire.String(g, 2, "test")
	for _, t := range m.Inits {
		g = pbwire.Bytes(g, 5, t.bytes())
	}
	for _, v := range m.Inputs {
		g = pbwire.Bytes(g, 11, v.bytes())
	}
	for _, v := range m.Outputs {
		g = pbwire.Bytes(g, 12, v.bytes())
	}
	g = append(g, m.GraphExtra...)
	var b []byte
	b = pbwire.Varint(b, 1, 7)
	b = pbwire.String(b, 2, "onnxtest")
	b = pbwire.Bytes(b, 7, g)
	var op []byte
	op = pbwire.String(op, 1, "")
	op = pbwire.Varint(op, 2, uint64(m.Opset))
	b = pbwire.Bytes(b, 8, op)
	return append(b, m.Extra...)
}

func (n Node) bytes() []byte {
	var b []byte
	for _, s := range n.In {
		b = pbwire.String(b, 1, s)
	}
	for _, s := range n.Out {
		b = pbwire.String(b, 2, s)
	}
	b = pbwire.String(b, 3, n.Name)
	b = pbwire.String(b, 4, n.Op)
	for _, a := range n.Attrs {
		b = pbwire.Bytes(b, 5, a.bytes())
	}
	if n.Domain != "" {
		b = pbwire.String(b, 7, n.Domain)
	}
	return append(b, n.Extra...)
}

func (a Attr) bytes() []byte {
	if a.raw != nil {
		return a.raw
	}
	var b []byte
	b = pbwire.String(b, 1, a.name)
	switch a.kind {
	case 1:
		b = protowire.AppendTag(b, 2, protowire.Fixed32Type)
		b = protowire.AppendFixed32(b, math.Float32bits(a.f))
	case 2:
		b = pbwire.Varint(b, 3, uint64(a.i))
	case 3:
		b = pbwire.String(b, 4, a.s)
	case 4:
		b = pbwire.Bytes(b, 5, a.t.bytes())
	case 6:
		for _, f := range a.fs {
			b = protowire.AppendTag(b, 7, protowire.Fixed32Type)
			b = protowire.AppendFixed32(b, math.Float32bits(f))
		}
	case 7:
		for _, v := range a.ints {
			b = pbwire.Varint(b, 8, uint64(v))
		}
	}
	return pbwire.Varint(b, 20, uint64(a.kind))
}

func (t Tensor) bytes() []byte {
	var b []byte
	for _, d := range t.Dims {
		b = pbwire.Varint(b, 1, uint64(d))
	}
	var raw []byte
	dt := t.DataType
	if t.IsInt {
		dt = cmp.Or(dt, 7)
		for _, v := range t.I {
			raw = binary.LittleEndian.AppendUint64(raw, uint64(v))
		}
	} else {
		dt = cmp.Or(dt, 1)
		for _, v := range t.F {
			raw = binary.LittleEndian.AppendUint32(raw, math.Float32bits(v))
		}
	}
	b = pbwire.Varint(b, 2, uint64(dt))
	b = pbwire.String(b, 8, t.Name)
	if t.Raw != nil {
		raw = t.Raw
	}
	if len(raw) > 0 || t.Raw != nil {
		b = protowire.AppendTag(b, 9, protowire.BytesType)
		b = protowire.AppendBytes(b, raw)
	}
	return append(b, t.Extra...)
}

func (v Value) bytes() []byte {
	var tt []byte
	tt = pbwire.Varint(tt, 1, uint64(cmp.Or(v.ElemType, 1)))
	if v.Dims != nil {
		tt = pbwire.Bytes(tt, 2, v.shape())
	}
	var typ []byte
	typ = pbwire.Bytes(typ, 1, tt)
	var b []byte
	b = pbwire.String(b, 1, v.Name)
	return pbwire.Bytes(b, 2, typ)
}

func (v Value) shape() []byte {
	var shape []byte
	for _, d := range v.Dims {
		var dim []byte
		switch d := d.(type) {
		case int:
			dim = pbwire.Varint(dim, 1, uint64(d))
		case string:
			dim = pbwire.String(dim, 2, d)
		}
		shape = pbwire.Bytes(shape, 1, dim)
	}
	return shape
}

// Varint, Bytes and Fixed32 append a field to an encoded message.
func Varint(b []byte, num int, v uint64) []byte { return pbwire.Varint(b, protowire.Number(num), v) }
func Bytes(b []byte, num int, v []byte) []byte  { return pbwire.Bytes(b, protowire.Number(num), v) }
func Fixed32(b []byte, num int, v uint32) []byte {
	b = protowire.AppendTag(b, protowire.Number(num), protowire.Fixed32Type)
	return protowire.AppendFixed32(b, v)
}
