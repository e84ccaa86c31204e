package onnxfix

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
)

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

// setStr sets *dst to the string field f ("" if it fails str).
func (f field) setStr(dst *string, name string) error {
	s, err := f.str(name)
	*dst = s
	return err
}

// message calls fn for every field of f, an embedded message.
func (f field) message(name string, fn func(field) error) error {
	if err := f.want(protowire.BytesType, name); err != nil {
		return err
	}
	return fields(f.val, fn)
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

// fixeds calls add for each value of a repeated field of wire type typ,
// fixed32 or fixed64, packed or not.
func (f field) fixeds(name string, typ protowire.Type, add func(uint64)) error {
	size := 4
	if typ == protowire.Fixed64Type {
		size = 8
	}
	switch f.typ {
	case typ:
		add(f.v)
		return nil
	case protowire.BytesType:
		if len(f.val)%size != 0 {
			return &WireError{f.num, fmt.Errorf("packed %s has %d bytes, not a multiple of %d", name, len(f.val), size)}
		}
		for b := f.val; len(b) > 0; b = b[size:] {
			if size == 4 {
				add(uint64(binary.LittleEndian.Uint32(b)))
			} else {
				add(binary.LittleEndian.Uint64(b))
			}
		}
		return nil
	}
	return f.want(typ, name)
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
