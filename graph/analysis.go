package graph

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Errors of the model analysis.
var (
	// ErrNoClassifier: no layer reaches graph output 0 through ops that carry
	// no layer weight.
	ErrNoClassifier = errors.New("graph: no classifier layer found")
	// ErrAmbiguousClassifier: several layers reach graph output 0 directly.
	ErrAmbiguousClassifier = errors.New("graph: classifier layer is ambiguous")
	// ErrUnknownLayer: a layer name given by the user names no layer.
	ErrUnknownLayer = errors.New("graph: unknown layer")
)

// computeDepth sets Layer.Depth and MaxDepth: the depth of a layer is the
// number of layer ops (the Op of any layer, standalone ones included) on the
// longest path from a graph input or initializer to the layer's Op that
// follows differentiable inputs only, not counting Op itself. Ops inside
// subgraphs take the depth of the node that holds the subgraph.
func (nm *NeuronMap) computeDepth(order []*Node) {
	g := nm.Graph
	isLayerNode := map[*Node]bool{}
	for _, l := range nm.Layers {
		isLayerNode[topNode(g, l.Op)] = true
	}
	vd := map[*Value]int{}
	nd := map[*Node]int{}
	for _, n := range order {
		in := 0
		for i, v := range n.inputs {
			if v != nil && IsDifferentiableInput(n, i) {
				in = max(in, vd[v])
			}
		}
		nd[n] = in
		out := in
		if isLayerNode[n] {
			out++
		}
		for _, o := range n.outputs {
			if o != nil {
				vd[o] = out
			}
		}
	}
	nm.MaxDepth = 0
	for _, l := range nm.Layers {
		l.Depth = nd[topNode(g, l.Op)]
		nm.MaxDepth = max(nm.MaxDepth, l.Depth)
	}
}

// topNode returns n, or for a node in a subgraph the node of g that holds it.
func topNode(g *Graph, n *Node) *Node {
	for n != nil && n.graph != g && n.graph != nil {
		n = n.graph.owner()
	}
	return n
}

// LayersByDepth returns the layers sorted by depth (shallowest first; ties in
// layer order).
func (nm *NeuronMap) LayersByDepth() []*Layer {
	out := append([]*Layer(nil), nm.Layers...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Depth < out[j].Depth })
	return out
}

// Classifier returns the classifier layer: with override empty, the layer
// carried by a Conv/ConvTranspose/Gemm/MatMul whose output reaches graph
// output 0 (the logits) along differentiable inputs through nodes that are no
// such layer's Op (standalone parameters, normalizations, activations and
// reshapes are passed through). With override set, the layer whose name, Op
// node name or member parameter name equals it. Errors list the valid names.
func (nm *NeuronMap) Classifier(override string) (*Layer, error) {
	if override != "" {
		for _, l := range nm.Layers {
			if l.Name == override || (l.Op != nil && l.Op.Name == override) {
				return l, nil
			}
		}
		for _, l := range nm.Layers {
			for _, m := range l.Members {
				if m.Param.Name == override {
					return l, nil
				}
			}
		}
		return nil, fmt.Errorf("%w %q; layers are: %s", ErrUnknownLayer, override, nm.layerNames())
	}
	g := nm.Graph
	if len(g.Outputs) == 0 || g.Outputs[0] == nil {
		return nil, fmt.Errorf("%w: the graph has no output", ErrNoClassifier)
	}
	weightOp := map[*Node]*Layer{}
	for _, l := range nm.Layers {
		if !l.Standalone {
			weightOp[l.Op] = l
		}
	}
	found := map[*Layer]bool{}
	seen := map[*Value]bool{}
	stack := []*Value{g.Outputs[0]}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		p, _ := v.Producer()
		if p == nil {
			continue
		}
		if l := weightOp[p]; l != nil {
			found[l] = true
			continue
		}
		for i, in := range p.inputs {
			if in != nil && IsDifferentiableInput(p, i) {
				stack = append(stack, in)
			}
		}
	}
	var cands []*Layer
	for l := range found {
		cands = append(cands, l)
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].Index < cands[j].Index })
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("%w: nothing reaches output %q; name one of: %s",
			ErrNoClassifier, g.Outputs[0].Name, nm.layerNames())
	case 1:
		return cands[0], nil
	}
	names := make([]string, len(cands))
	for i, l := range cands {
		names[i] = l.Name
	}
	return nil, fmt.Errorf("%w: %s all reach output %q; name one",
		ErrAmbiguousClassifier, strings.Join(names, ", "), g.Outputs[0].Name)
}

func (nm *NeuronMap) layerNames() string {
	names := make([]string, len(nm.Layers))
	for i, l := range nm.Layers {
		names[i] = l.Name
	}
	return strings.Join(names, ", ")
}

// Classifier analyses g (see Neurons) and returns its classifier layer (see
// NeuronMap.Classifier).
func Classifier(g *Graph, override string) (*Layer, error) {
	nm, err := Neurons(g)
	if err != nil {
		return nil, err
	}
	return nm.Classifier(override)
}
