package onnxfix

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/amt-dev/amt/nn/internal/pbwire"
	"google.golang.org/protobuf/encoding/protowire"
)

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
		if at, ok := attrValueTypes[f.num]; ok {
			present[at] = true
		}
		switch f.num {
		case attrName:
			return f.setStr(&name, "name")
		case attrType:
			typ, hasType = f.v, true
			return f.want(protowire.VarintType, "type")
		case attrF:
			f32 = uint32(f.v)
			return f.want(protowire.Fixed32Type, "f")
		case attrI:
			i64 = f.v
			return f.want(protowire.VarintType, "i")
		case attrS:
			s = f.val
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
		case attrFloats:
			return f.fixeds("floats", protowire.Fixed32Type, func(v uint64) { floats = binary.LittleEndian.AppendUint32(floats, uint32(v)) })
		case attrInts:
			return f.varints("ints", func(v uint64) { ints = protowire.AppendVarint(ints, v) })
		case attrStrings:
			strs = append(strs, f.val)
			return f.want(protowire.BytesType, "strings")
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
	out := pbwire.String(nil, attrName, name)
	switch typ {
	case atFloat:
		out = protowire.AppendTag(out, attrF, protowire.Fixed32Type)
		out = protowire.AppendFixed32(out, f32)
	case atInt:
		out = pbwire.Varint(out, attrI, i64)
	case atString:
		out = pbwire.Bytes(out, attrS, s)
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
		out = pbwire.Bytes(out, attrT, t.encode())
	case atFloats:
		out = pbwire.Bytes(out, attrFloats, floats)
	case atInts:
		out = pbwire.Bytes(out, attrInts, ints)
	case atStrings:
		for _, v := range strs {
			out = pbwire.Bytes(out, attrStrings, v)
		}
	default:
		// Graphs, tensor lists, sparse tensors, types, or nothing: passed on
		// without a value; the engine reports the attribute (or the
		// operator) as unsupported.
		typ = atUndefined
	}
	return pbwire.Varint(out, attrType, typ), nil
}
