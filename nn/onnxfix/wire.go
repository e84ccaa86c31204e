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
