package onnxfix

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

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

// attrValueTypes maps each value field of an AttributeProto to the
// attribute type whose value it holds.
var attrValueTypes = map[protowire.Number]uint64{
	attrF: atFloat, attrI: atInt, attrS: atString, attrT: atTensor, attrG: atGraph,
	attrFloats: atFloats, attrInts: atInts, attrStrings: atStrings, attrTensors: atTensors,
	attrGraphs: atGraphs, attrSparseT: atSparse, attrSparseS: atSparses, attrTP: atTypeProto,
	attrTPs: atTPs,
}

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
