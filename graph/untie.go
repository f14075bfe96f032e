package graph

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// UntieIdentityInitializers undoes the initializer merging of PyTorch's
// exporter, which keeps one copy of equal-valued tensors and feeds the others
// through Identity nodes (`onnx::Conv_123` → Identity → `layer1.0.bn1.weight`),
// tying parameters that were separate in PyTorch.
//
// Every Identity node of g (not of its subgraphs) whose input is an
// initializer of g is replaced by a new initializer that holds a copy of the
// data and is named after the Identity's output (the state_dict name); the
// Identity's consumers are re-pointed to it and the node is removed. An
// initializer that is left without uses is removed. Identity nodes are left
// alone when their output is a graph output or when their input is also a
// graph input (IR < 4 style, so it may be overridden at run time). Chains of
// Identity nodes are untied link by link. The copy has no Ext (the original
// protobuf is not reused).
//
// The operation is idempotent; it returns how many Identity nodes it removed.
func UntieIdentityInitializers(g *Graph) (int, error) {
	order, err := g.Topo()
	if err != nil {
		return 0, fmt.Errorf("graph: untie: %w", err)
	}
	untied := 0
	sources := map[*Value][]*Value{} // initializer → its untied copies
	for _, n := range order {
		if n.OpType != ops.Identity || !n.IsDefaultDomain() || len(n.outputs) != 1 {
			continue
		}
		in, out := n.Input(0), n.Output(0)
		if in == nil || out == nil || in.Init == nil || in.graph != g || g.isInput(in) || g.isOutput(out) {
			continue
		}
		name := out.Name
		t := in.Init.Clone()
		t.Ext = nil
		t.Name = g.FreshName(name + "_untied")
		nv, err := g.AddInitializer(t)
		if err != nil {
			return untied, fmt.Errorf("graph: untie %v: %w", n, err)
		}
		nv.Doc = out.Doc
		g.ReplaceAllUsesWith(out, nv)
		if err := g.RemoveNode(n); err != nil {
			return untied, fmt.Errorf("graph: untie: %w", err)
		}
		g.renameValue(nv, name)
		sources[in] = append(sources[in], nv)
		untied++
	}
	if untied == 0 {
		return 0, nil
	}
	// Keep file order: each copy goes right after the tensor it copies.
	isNew := map[*Value]bool{}
	for _, copies := range sources {
		for _, c := range copies {
			isNew[c] = true
		}
	}
	inits := make([]*Value, 0, len(g.Initializers))
	var emit func(v *Value)
	emit = func(v *Value) {
		inits = append(inits, v)
		for _, c := range sources[v] {
			emit(c)
		}
	}
	for _, v := range g.Initializers {
		if !isNew[v] {
			emit(v)
		}
	}
	g.Initializers = inits
	for _, in := range append([]*Value(nil), inits...) {
		if _, ok := sources[in]; !ok {
			continue
		}
		if len(in.uses) == 0 && !g.isOutput(in) {
			if err := g.RemoveInitializer(in); err != nil {
				return untied, fmt.Errorf("graph: untie: %w", err)
			}
		}
	}
	return untied, nil
}

// renameValue gives v (defined in g) a name that is free in g.
func (g *Graph) renameValue(v *Value, name string) {
	delete(g.values, v.Name)
	v.Name = name
	if v.Init != nil {
		v.Init.Name = name
	}
	g.values[name] = v
}
