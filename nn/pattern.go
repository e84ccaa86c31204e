package nn

import (
	"math"
	"slices"
)

// Matching a group of nodes that the node being built compiles into one op
// (the decomposed layer normalisation, element-wise chains such as GELU):
// a matcher walks from the node being built to later nodes through values
// used by exactly one node, collects them, checks that nothing outside the
// group uses a value the group computes (but its last), and marks them as
// compiled on commit.

// matcher collects the nodes of a group, in the order found.
type matcher struct {
	b     *builder
	nodes []int // node indices, all after b.idx
}

func (b *builder) pattern() *matcher { return &matcher{b: b} }

// only returns the node using the value name, if exactly one node after the
// one being built uses it (once or more), it is not a graph output, and the
// node's operator is op; the node joins the group. It returns nil
// otherwise.
func (m *matcher) only(name, op string) *onode {
	p := m.b.p
	cs := p.consumers[name]
	if len(cs) != 1 || p.isOutput[name] || cs[0] <= m.b.idx {
		return nil
	}
	n := &p.nodes[cs[0]]
	if n.op != op || n.domain != "" && n.domain != "ai.onnx" {
		return nil
	}
	m.take(cs[0])
	return n
}

// take adds node j to the group.
func (m *matcher) take(j int) {
	if !slices.Contains(m.nodes, j) {
		m.nodes = append(m.nodes, j)
	}
}

// untake removes n from the group.
func (m *matcher) untake(n *onode) {
	for k, j := range m.nodes {
		if &m.b.p.nodes[j] == n {
			m.nodes = slices.Delete(m.nodes, k, k+1)
			return
		}
	}
}

// constant returns the value of name if it is a constant: known now, or the
// output of a Constant node not compiled yet (exporters write a Constant
// just before its use). nil otherwise.
func (m *matcher) constant(name string) *tens {
	if v, ok := m.b.env[name]; ok {
		return v.c
	}
	p := m.b.p
	for j := m.b.idx + 1; j < len(p.nodes); j++ {
		n := &p.nodes[j]
		if !slices.Contains(n.outputs, name) {
			continue
		}
		if n.op != "Constant" || len(n.outputs) != 1 {
			return nil
		}
		var c *tens
		if !attempt(func() { c = constantOp(m.b, newAttrs(n), nil).c }) {
			return nil
		}
		return c
	}
	return nil
}

// scalar returns the value of name if it is a float constant holding one
// value, NaN otherwise.
func (m *matcher) scalar(name string) float32 {
	c := m.constant(name)
	if c == nil || c.isInt || len(c.f) != 1 {
		return float32(math.NaN())
	}
	return c.f[0]
}

// sameReduce reports whether the reduction nodes r1 and r2, of inputs of
// rank r, reduce the same axes, both keeping them.
func (m *matcher) sameReduce(r1, r2 *onode, r int) bool {
	if r1.op != r2.op {
		return false
	}
	same := false
	ok := attempt(func() {
		a1, a2 := newAttrs(r1), newAttrs(r2)
		red1, noop1 := m.b.reduceAxes(a1, m.inputs(r1), r, 18)
		red2, noop2 := m.b.reduceAxes(a2, m.inputs(r2), r, 18)
		same = !noop1 && !noop2 && slices.Equal(red1, red2) &&
			a1.int("keepdims", 1) != 0 && a2.int("keepdims", 1) != 0
		a1.checkUnused()
		a2.checkUnused()
	})
	return ok && same
}

// inputs returns the constant inputs of n (nil for the others): enough for
// reading a reduction's axes.
func (m *matcher) inputs(n *onode) []*value {
	ins := make([]*value, len(n.inputs))
	for k, name := range n.inputs {
		if c := m.constant(name); c != nil {
			ins[k] = constVal(c)
		}
	}
	return ins
}

// ok reports whether the group (with the node being built) can be
// compiled now as one op computing result: every other value a node of the
// group computes is used only inside the group.
func (m *matcher) ok(result string) bool {
	if len(m.nodes) == 0 {
		return false
	}
	p := m.b.p
	in := map[int]bool{m.b.idx: true}
	for _, j := range m.nodes {
		in[j] = true
	}
	for j := range in {
		for _, o := range p.nodes[j].outputs {
			if o == "" || o == result {
				continue
			}
			if p.isOutput[o] {
				return false
			}
			for _, c := range p.consumers[o] {
				if !in[c] {
					return false
				}
			}
		}
	}
	return true
}

// commit marks the nodes of the group as compiled.
func (m *matcher) commit() {
	for _, j := range m.nodes {
		m.b.skip[j] = true
	}
}
