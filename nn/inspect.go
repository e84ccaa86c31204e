package nn

import (
	"fmt"
	"os"

	"github.com/amt-dev/amt/nn/onnxfix"
)

// OpUse is how a model uses one operator type.
type OpUse struct {
	Op        string
	Domain    string // "" for the default (ai.onnx) domain
	Count     int    // nodes using it
	FirstNode string // name of the first of them ("#i" for an unnamed node i)
	Supported bool   // in the engine's operator table (SupportedOps)
}

// ModelInfo describes an ONNX model file as declared, without building
// it: what `amt infer -check` prints.
type ModelInfo struct {
	Opset   int64 // of the default domain
	Nodes   int
	Inputs  []TensorInfo // graph inputs but initializers; -1 for a dynamic dimension, nil if not declared
	Outputs []TensorInfo
	Ops     []OpUse // in order of first use
}

// Unsupported returns the operators of the model the engine does not
// implement.
func (mi *ModelInfo) Unsupported() []OpUse {
	var out []OpUse
	for _, u := range mi.Ops {
		if !u.Supported {
			out = append(out, u)
		}
	}
	return out
}

// Inspect reads the ONNX model in the file at path and describes it: its
// operators (supported or not), opset, inputs and outputs. It succeeds on
// models the engine cannot run; Load then reports why.
func Inspect(path string) (*ModelInfo, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("nn: %w", err)
	}
	mi, err := InspectBytes(b)
	if err != nil {
		return nil, fmt.Errorf("nn: inspect %s: %w", path, err)
	}
	return mi, nil
}

// InspectBytes is Inspect of the model encoded in b.
func InspectBytes(b []byte) (*ModelInfo, error) {
	_, info, err := onnxfix.Fix(b)
	if err != nil {
		return nil, err
	}
	g := info.Graph
	mi := &ModelInfo{Opset: info.Opset, Nodes: len(g.Nodes)}
	isInit := map[string]bool{}
	for _, name := range g.Initializers {
		isInit[name] = true
	}
	declared := func(v onnxfix.Value) TensorInfo {
		if !v.HasShape {
			return TensorInfo{Name: v.Name}
		}
		s := make([]int, len(v.Dims))
		for k, d := range v.Dims {
			s[k] = int(d)
		}
		return TensorInfo{Name: v.Name, Shape: s}
	}
	for _, v := range g.Inputs {
		if !isInit[v.Name] {
			mi.Inputs = append(mi.Inputs, declared(v))
		}
	}
	for _, v := range g.Outputs {
		mi.Outputs = append(mi.Outputs, declared(v))
	}
	at := map[[2]string]int{}
	for i, n := range g.Nodes {
		dom := n.Domain
		if dom == "ai.onnx" {
			dom = ""
		}
		key := [2]string{dom, n.OpType}
		k, ok := at[key]
		if !ok {
			name := n.Name
			if name == "" {
				name = fmt.Sprintf("#%d", i)
			}
			_, sup := opTable[n.OpType]
			mi.Ops = append(mi.Ops, OpUse{Op: n.OpType, Domain: dom, FirstNode: name, Supported: sup && dom == ""})
			k = len(mi.Ops) - 1
			at[key] = k
		}
		mi.Ops[k].Count++
	}
	return mi, nil
}
