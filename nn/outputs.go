package nn

import (
	"fmt"
	"maps"
	"slices"

	"github.com/amt-dev/amt/nn/kernels"
)

// Any tensor as an output: LoadOptions.Outputs makes named tensors the
// model's outputs, in that order, in place of the graph's own — any float
// tensor a node computes, an intermediate activation as well as a graph
// output ([Model.Tensors] lists them with their shapes). Nodes that none
// of them depends on are dropped, and no fused kernel swallows a named
// tensor. A name the graph does not compute is an [*UnknownTensorError]
// (inside the *ModelError of the load).

// UnknownTensorError reports a tensor name that a model's graph does not
// compute; Tensors lists the ones it does (see [Model.Tensors]).
type UnknownTensorError struct {
	Model   string
	Name    string
	Tensors []TensorInfo
}

func (e *UnknownTensorError) Error() string {
	return fmt.Sprintf("the graph computes no tensor %q; its %d tensors: %s", e.Name, len(e.Tensors), infoNames(e.Tensors))
}

// Tensors lists every float tensor the model's graph computes, node by
// node in graph order, with its shape for one image (−1 on a dynamic
// batch axis): the names [LoadOptions.Outputs] accepts.
func (m *Model) Tensors() ([]TensorInfo, error) {
	return m.p.tensors()
}

func (p *program) tensors() ([]TensorInfo, error) {
	// Compile a copy in which every node output is an output, so that no
	// fusion hides an intermediate value.
	all := map[string]bool{}
	for _, n := range p.nodes {
		for _, o := range n.outputs {
			if o != "" {
				all[o] = true
			}
		}
	}
	q := p.derive(p.nodes, nil, all)
	_, b, err := q.compile(q.batchKey(1))
	if err != nil {
		return nil, err
	}
	var out []TensorInfo
	for _, n := range p.nodes {
		for _, o := range n.outputs {
			v, ok := b.env[o]
			if o == "" || !ok || (v.c != nil && v.c.isInt) {
				continue
			}
			s := slices.Clone(v.shape)
			if p.dynamic && len(s) > 0 && s[0] == 1 {
				s[0] = -1
			}
			out = append(out, TensorInfo{Name: o, Shape: s})
		}
	}
	return out, nil
}

// withOutputs returns p with the named tensors as its outputs and only the
// nodes they depend on.
func (p *program) withOutputs(names []string) (*program, error) {
	made := map[string]bool{}
	for _, n := range p.nodes {
		for _, o := range n.outputs {
			made[o] = o != ""
		}
	}
	var outs []TensorInfo
	isOut := map[string]bool{}
	for _, name := range names {
		if !made[name] {
			ts, err := p.tensors()
			if err != nil {
				return nil, err
			}
			return nil, &UnknownTensorError{Model: p.name, Name: name, Tensors: ts}
		}
		if isOut[name] {
			return nil, fmt.Errorf("output %q requested twice", name)
		}
		isOut[name] = true
		outs = append(outs, TensorInfo{Name: name}) // shape from the first build
	}
	need := maps.Clone(isOut)
	keep := make([]bool, len(p.nodes))
	for i := len(p.nodes) - 1; i >= 0; i-- {
		n := p.nodes[i]
		for _, o := range n.outputs {
			keep[i] = keep[i] || (o != "" && need[o])
		}
		if keep[i] {
			for _, in := range n.inputs {
				if in != "" {
					need[in] = true
				}
			}
		}
	}
	var nodes []onode
	for i, n := range p.nodes {
		if keep[i] {
			nodes = append(nodes, n)
		}
	}
	return p.derive(nodes, outs, isOut), nil
}

// derive returns a program over p's weights and inputs with these nodes
// and outputs: its consumers are recomputed, its conv kernels are its own
// (they are keyed by node index).
func (p *program) derive(nodes []onode, outputs []TensorInfo, isOutput map[string]bool) *program {
	q := &program{
		name: p.name, opt: p.opt, opset: p.opset, weights: p.weights, nodes: nodes, consts: p.consts, inputs: p.inputs, outputs: outputs,
		dynamic: p.dynamic, splittable: p.splittable,
		consumers: map[string][]int{}, isOutput: isOutput, convs: map[convKey]*kernels.Conv{},
	}
	for i, n := range nodes {
		for _, in := range n.inputs {
			if in != "" && !slices.Contains(q.consumers[in], i) {
				q.consumers[in] = append(q.consumers[in], i)
			}
		}
	}
	return q
}
