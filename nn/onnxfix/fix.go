package onnxfix

import (
	"errors"
	"fmt"

	"github.com/amt-dev/amt/nn/internal/pbwire"
	"google.golang.org/protobuf/encoding/protowire"
)

// Fix parses and checks an ONNX model, records its structure and returns
// the re-encoding of it described in the package documentation.
// b is not modified.
func Fix(b []byte) ([]byte, *Model, error) {
	out, m, err := fix(b)
	if err != nil {
		var we *WireError
		if errors.As(err, &we) {
			return nil, nil, fmt.Errorf("truncated or not an ONNX file (%w)", err)
		}
		return nil, nil, err
	}
	return out, m, nil
}

func fix(b []byte) ([]byte, *Model, error) {
	m := &Model{}
	var graph []byte
	seenGraph := false
	var opsets []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case modelIRVersion:
			if err := f.want(protowire.VarintType, "ir_version"); err != nil {
				return err
			}
			m.IRVersion = int64(f.v)
		case modelGraph:
			if err := f.want(protowire.BytesType, "graph"); err != nil {
				return err
			}
			if seenGraph {
				return errors.New("the model has more than one graph")
			}
			seenGraph = true
			graph = f.val
		case modelOpsetImport:
			if err := f.want(protowire.BytesType, "opset_import"); err != nil {
				return err
			}
			domain, version, err := parseOpset(f.val)
			if err != nil {
				return fmt.Errorf("opset_import: %w", err)
			}
			if domain == "" || domain == "ai.onnx" {
				m.Opset = version
			}
			opsets = pbwire.Bytes(opsets, modelOpsetImport, pbwire.Varint(pbwire.String(nil, opsetDomain, domain), opsetVersion, uint64(version)))
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if !seenGraph {
		return nil, nil, errors.New("truncated or not an ONNX file: it has no graph")
	}
	if m.Opset == 0 {
		return nil, nil, errors.New("the model imports no version of the default (ai.onnx) operator set")
	}
	if m.Opset < 1 || m.Opset > MaxOpset {
		return nil, nil, fmt.Errorf("opset %d of the default (ai.onnx) operator set is not a valid version (1 to %d)", m.Opset, MaxOpset)
	}
	g, err := fixGraph(graph, &m.Graph)
	if err != nil {
		return nil, nil, fmt.Errorf("graph: %w", err)
	}
	out := pbwire.Varint(make([]byte, 0, len(g)+len(opsets)+32), modelIRVersion, uint64(m.IRVersion))
	out = append(out, opsets...)
	out = pbwire.Bytes(out, modelGraph, g)
	return out, m, nil
}

func parseOpset(b []byte) (domain string, version int64, err error) {
	err = fields(b, func(f field) error {
		switch f.num {
		case opsetDomain:
			return f.setStr(&domain, "domain")
		case opsetVersion:
			version = int64(f.v)
			return f.want(protowire.VarintType, "version")
		}
		return nil
	})
	return
}

func fixGraph(b []byte, g *Graph) ([]byte, error) {
	g.Empty = map[string][]int64{}
	// The rewritten graph is about as long as the original (its
	// initializers, most of a model's bytes, are copied as they are).
	out := make([]byte, 0, len(b)+len(b)/16)
	var ins, outs []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case graphName:
			return f.setStr(&g.Name, "name")
		case graphNode:
			if err := f.want(protowire.BytesType, "node"); err != nil {
				return err
			}
			var n Node
			nb, err := fixNode(f.val, &n)
			if err != nil {
				if n.Name != "" {
					return fmt.Errorf("node %d (%q): %w", len(g.Nodes), n.Name, err)
				}
				return fmt.Errorf("node %d: %w", len(g.Nodes), err)
			}
			g.Nodes = append(g.Nodes, n)
			out = pbwire.Bytes(out, graphNode, nb)
		case graphInitializer:
			if err := f.want(protowire.BytesType, "initializer"); err != nil {
				return err
			}
			t, err := parseTensor(f.val)
			if err != nil {
				if t.name != "" {
					return fmt.Errorf("initializer %q: %w", t.name, err)
				}
				return fmt.Errorf("initializer %d: %w", len(g.Initializers), err)
			}
			if t.name == "" {
				return fmt.Errorf("initializer %d has no name", len(g.Initializers))
			}
			g.Initializers = append(g.Initializers, t.name)
			if t.empty() {
				g.Empty[t.name] = t.dims
			}
			out = pbwire.Bytes(out, graphInitializer, t.encode())
		case graphSparseInit:
			return errors.New("sparse initializers are not supported")
		case graphInput, graphOutput:
			what := "input"
			if f.num == graphOutput {
				what = "output"
			}
			if err := f.want(protowire.BytesType, what); err != nil {
				return err
			}
			v, err := parseValue(f.val)
			if err != nil {
				if v.Name != "" {
					return fmt.Errorf("%s %q: %w", what, v.Name, err)
				}
				return fmt.Errorf("%s: %w", what, err)
			}
			// Only the name is passed on: onnx-go would allocate a tensor
			// of the declared shape.
			vb := pbwire.String(nil, valueName, v.Name)
			if f.num == graphInput {
				g.Inputs = append(g.Inputs, v)
				ins = pbwire.Bytes(ins, graphInput, vb)
			} else {
				g.Outputs = append(g.Outputs, v)
				outs = pbwire.Bytes(outs, graphOutput, vb)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out = append(out, ins...)
	return append(out, outs...), nil
}

func fixNode(b []byte, n *Node) ([]byte, error) {
	var out []byte
	err := fields(b, func(f field) error {
		switch f.num {
		case nodeInput, nodeOutput:
			what, names := "input", &n.Inputs
			if f.num == nodeOutput {
				what, names = "output", &n.Outputs
			}
			s, err := f.str(fmt.Sprintf("%s %d", what, len(*names)))
			*names = append(*names, s)
			if err == nil {
				out = pbwire.String(out, f.num, s)
			}
			return err
		case nodeName:
			return f.setStr(&n.Name, "name")
		case nodeOpType:
			return f.setStr(&n.OpType, "op_type")
		case nodeDomain:
			return f.setStr(&n.Domain, "domain")
		case nodeAttribute:
			if err := f.want(protowire.BytesType, "attribute"); err != nil {
				return err
			}
			ab, err := fixAttribute(f.val, n)
			if err != nil {
				return err
			}
			out = pbwire.Bytes(out, nodeAttribute, ab)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n.OpType == "" {
		return nil, errors.New("no op_type")
	}
	out = pbwire.String(out, nodeName, n.Name)
	out = pbwire.String(out, nodeOpType, n.OpType)
	if n.Domain != "" {
		out = pbwire.String(out, nodeDomain, n.Domain)
	}
	return out, nil
}
