// Package onnxfix is a validating pre-pass over ONNX model files that also
// rewrites them: every model file passes through it, at the wire level,
// before github.com/owulveryck/onnx-go decodes it. It refuses what amt
// cannot load safely, records what onnx-go would lose, and re-encodes the
// rest in a form onnx-go decodes safely.
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
