package graph

import (
	"fmt"

	"github.com/unlearn-tool/unlearn/graph/ops"
)

// InferenceForm rewrites training-mode nodes into their inference form, in
// place, and reports how many nodes it changed:
//   - BatchNormalization with training_mode=1 (what PyTorch's
//     TrainingMode.TRAINING export writes at opset 14+) gets training_mode=0 and
//     loses its running-statistics outputs, which must be unused;
//   - Dropout whose training_mode input is a constant true gets that input
//     replaced by a constant false (so the node is the identity).
//
// The written model then computes what PyTorch's eval() computes.
func InferenceForm(g *Graph) (int, error) {
	changed := 0
	for _, n := range g.Nodes() {
		switch {
		case n.OpType == ops.BatchNormalization && n.IsDefaultDomain():
			if n.AttrInt("training_mode", 0) == 0 {
				continue
			}
			for i := 1; i < len(n.outputs); i++ {
				o := n.outputs[i]
				if o == nil {
					continue
				}
				if len(o.uses) > 0 || g.isOutput(o) {
					return changed, fmt.Errorf("%v: running-statistics output %q is used; cannot switch to inference mode", n, o.Name)
				}
			}
			for i := 1; i < len(n.outputs); i++ {
				if o := n.outputs[i]; o != nil {
					delete(g.values, o.Name)
				}
			}
			n.outputs = n.outputs[:1]
			n.removeAttr("training_mode")
			changed++
		case n.OpType == ops.Dropout && n.IsDefaultDomain():
			tm := n.Input(2)
			if tm == nil {
				continue
			}
			on, known := constBool(tm)
			if !known {
				return changed, fmt.Errorf("%v: training_mode input %q is not a constant", n, tm.Name)
			}
			if !on {
				continue
			}
			off, err := g.AddInitializer(&Tensor{Name: g.FreshName(n.Name + "_inference_mode"), DType: Bool,
				Shape: []int64{}, Raw: []byte{0}})
			if err != nil {
				return changed, err
			}
			n.SetInput(2, off)
			if len(tm.uses) == 0 && tm.IsInitializer() && !g.isInput(tm) {
				_ = g.RemoveInitializer(tm)
			}
			changed++
		}
	}
	return changed, nil
}

// HasTrainingForm reports whether InferenceForm could change g: a
// BatchNormalization in training mode, or a Dropout with a training_mode
// input (InferenceForm decides whether it is a constant true).
func HasTrainingForm(g *Graph) bool {
	for _, n := range g.Nodes() {
		if !n.IsDefaultDomain() {
			continue
		}
		if n.OpType == ops.BatchNormalization && n.AttrInt("training_mode", 0) != 0 ||
			n.OpType == ops.Dropout && n.Input(2) != nil {
			return true
		}
	}
	return false
}

func (n *Node) removeAttr(name string) {
	for i, a := range n.Attrs {
		if a.Name == name {
			n.Attrs = append(n.Attrs[:i:i], n.Attrs[i+1:]...)
			return
		}
	}
}

func (g *Graph) isOutput(v *Value) bool {
	for _, o := range g.Outputs {
		if o == v {
			return true
		}
	}
	return false
}

// constBool returns the value of a scalar boolean constant (an initializer or
// the output of a Constant node).
func constBool(v *Value) (val, known bool) {
	t := v.Init
	if t == nil {
		if p, _ := v.Producer(); p != nil && p.OpType == ops.Constant {
			if a := p.Attr("value"); a != nil && a.T != nil {
				t = a.T
			}
		}
	}
	if t == nil || t.Len() != 1 {
		return false, false
	}
	ints, err := t.Int64s()
	if err != nil {
		return false, false
	}
	return ints[0] != 0, true
}
