// Package pbwire appends protobuf fields (tag and value) to a message
// being encoded: what nn/onnxfix re-encodes models with and what
// nn/internal/onnxtest builds test models with.
package pbwire

import "google.golang.org/protobuf/encoding/protowire"

// Varint appends field num holding the varint v.
func Varint(b []byte, num protowire.Number, v uint64) []byte {
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

// Bytes appends field num holding v (bytes or an encoded message).
func Bytes(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// String appends field num holding s.
func String(b []byte, num protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}
