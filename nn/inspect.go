package nn

import (
	"fmt"
	"os"
	"runtime"

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

// PlannedBytes returns the bytes of activation memory Run uses for a batch
// of n images: the output buffers of the ops of the graphs it runs (shared
// between ops whose lifetimes do not overlap, see planMemory), for a batch
// run image by image those of one batch-1 graph per worker plus the
// concatenated outputs. It builds those graphs (Run would).
func (m *Model) PlannedBytes(n int) (int64, error) {
	if n <= 0 {
		return 0, fmt.Errorf("nn: %s: batch size must be positive, got %d", m.p.name, n)
	}
	p := m.p
	split := (p.dynamic && n >= splitMinBatch && p.isSeparable()) || (!p.dynamic && p.splittable && n > 1)
	if !split {
		inst, err := m.instance(p.batchKey(n))
		if err != nil {
			return 0, err
		}
		return inst.activationBytes(), nil
	}
	inst, err := m.instance(p.batchKey(1))
	if err != nil {
		return 0, err
	}
	var outs int64
	for _, v := range inst.outputs {
		outs += int64(numel(v.shape)) * int64(n) * 4
	}
	return int64(min(runtime.GOMAXPROCS(0), n))*inst.activationBytes() + outs, nil
}

// activationBytes returns the bytes of the distinct output buffers of the
// instance's ops.
func (inst *instance) activationBytes() int64 {
	seen := map[*buffer]bool{}
	var total int64
	for _, nd := range inst.g.AllNodes() {
		if o, ok := nd.Op().(*gop); ok && o.buf != nil && !seen[o.buf] {
			seen[o.buf] = true
			total += int64(cap(o.buf.data)) * 4
		}
	}
	return total
}
