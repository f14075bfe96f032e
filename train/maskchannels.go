package train

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/ops"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// MaskChannels returns, for autodiff.Spec.GradChannels, the output channels
// of each weight in mask (element masks by parameter name) that hold at
// least one selected element: the weight of a Conv, Gemm or MatMul layer of
// nm, not grouped, some but not all of whose channels are selected. Other
// parameters (biases, normalizations, standalone tensors, weights trained
// whole or not at all) are left out, and so keep their whole gradient.
// Since every selected element lies in a listed channel, an optimizer that
// honours Param.Mask updates the same elements from the restricted
// gradient as from the whole one.
func MaskChannels(nm *graph.NeuronMap, mask map[string][]bool) map[string][]int64 {
	out := map[string][]int64{}
	for _, l := range nm.Layers {
		if l.Standalone || len(l.Members) == 0 || l.Op == nil {
			continue
		}
		switch ops.KindOf(l.Op.OpType) {
		case ops.KindConv, ops.KindGemm, ops.KindMatMul:
		default:
			continue
		}
		w := l.Members[0]
		if w.Role != graph.KindWeight || w.Groups > 1 || w.Node != l.Op {
			continue
		}
		m := mask[w.Param.Name]
		if int64(len(m)) != w.Param.Init.Len() {
			continue
		}
		var sel []int64
		for c := range w.Channels() {
			for i := range w.Elements(c) {
				if m[i] {
					sel = append(sel, int64(c))
					break
				}
			}
		}
		if len(sel) > 0 && len(sel) < w.Channels() {
			out[w.Param.Name] = sel
		}
	}
	return out
}

// CoversMask reports whether every selected element of mask (a parameter
// of the given shape) lies in one of cg's channels, so that an update
// restricted to the mask reads only computed gradient values.
func CoversMask(cg autodiff.ChannelGrad, shape []int64, mask []bool) bool {
	if cg.Axis < 0 || cg.Axis >= len(shape) {
		return false
	}
	in := make([]bool, shape[cg.Axis])
	for _, c := range cg.Channels {
		if c < 0 || c >= int64(len(in)) {
			return false
		}
		in[c] = true
	}
	inner := 1
	for _, d := range shape[cg.Axis+1:] {
		inner *= int(d)
	}
	for i, sel := range mask {
		if sel && !in[(i/inner)%len(in)] {
			return false
		}
	}
	return true
}
