package onnxfix

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/amt-dev/amt/nn/internal/pbwire"
	"google.golang.org/protobuf/encoding/protowire"
)

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
			return f.setStr(&t.name, "name")
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
			return f.fixeds("float_data", protowire.Fixed32Type, func(v uint64) { t.values = append(t.values, v) })
		case tensorDoubleData:
			note("double_data")
			return f.fixeds("double_data", protowire.Fixed64Type, func(v uint64) { t.values = append(t.values, v) })
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
	dims, raw, values, typed := t.dims, t.raw, t.values, t.typed
	out := make([]byte, 0, len(raw)+len(t.name)+10*len(dims)+32)
	if t.empty() {
		dims, raw, values, typed = []int64{1}, nil, []uint64{0}, true
	}
	var pd []byte
	for _, d := range dims {
		pd = protowire.AppendVarint(pd, uint64(d))
	}
	if len(pd) > 0 {
		out = pbwire.Bytes(out, tensorDims, pd)
	}
	out = pbwire.Varint(out, tensorDataType, t.dtype)
	out = pbwire.String(out, tensorName, t.name)
	if !typed {
		return pbwire.Bytes(out, tensorRawData, raw)
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
	return pbwire.Bytes(out, num, data)
}
