package autodiff

import (
	"fmt"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
)

// ChannelGrad describes a weight gradient computed for some of the
// parameter's output channels only (Spec.GradChannels): the gradient output
// "grad/<param>" has len(Channels) elements on Axis instead of the
// parameter's size there, and its slice i is the gradient of channel
// Channels[i]. The gradient of every other channel is not computed.
type ChannelGrad struct {
	Axis     int
	Channels []int64 // ascending, distinct
}

// gradChannels returns the output channels the gradient of input i of n
// (a weight of C output channels) is restricted to by Spec.GradChannels, or
// nil for the full gradient: where the spec does not name the input, the
// input is not an initializer consumed by n alone (another use would add a
// gradient of the full shape), or the selection holds every channel. A
// selection that is not ascending, distinct and within [0, C) fails the
// build (ErrModel).
func (b *builder) gradChannels(n *graph.Node, i int, C int64) []int64 {
	if len(b.spec.GradChannels) == 0 {
		return nil
	}
	v := n.Input(i)
	if v == nil || v.Init == nil || len(v.Uses()) != 1 {
		return nil
	}
	sel, ok := b.spec.GradChannels[v.Name]
	if !ok || len(sel) == 0 || int64(len(sel)) >= C {
		return nil
	}
	for k, c := range sel {
		if c < 0 || c >= C || (k > 0 && c <= sel[k-1]) {
			b.fail("%w: GradChannels of %q: %v is not an ascending list of distinct channels in [0, %d)",
				ErrModel, v.Name, sel, C)
		}
	}
	return sel
}

// gatherChannels returns x's slices at the given indices along axis.
func (b *builder) gatherChannels(x *graph.Value, sel []int64, axis int64) *graph.Value {
	idx := b.constT(graph.NewInt64("", []int64{int64(len(sel))}, sel))
	return b.op1("Gather", []*graph.Value{x, idx}, aI("axis", axis))
}

// markPartial records that g, the gradient of input i of n, holds only the
// channels sel on the parameter's axis (see ChannelGrad), and checks its
// shape against the parameter's with that axis shortened.
func (b *builder) markPartial(n *graph.Node, i int, g *graph.Value, axis int, sel []int64) {
	v := n.Input(i)
	want := append([]int64{}, v.Init.Shape...)
	want[axis] = int64(len(sel))
	if gs := b.shape(g); gs == nil || !slices.Equal(gs, want) {
		b.fail("autodiff: rule for %v: channel gradient of %q has shape %v, want %v", n, v.Name, gs, want)
	}
	b.partial[g] = ChannelGrad{Axis: axis, Channels: append([]int64{}, sel...)}
}

// checkChannelSpec refuses GradChannels entries that name no initializer.
func checkChannelSpec(g *graph.Graph, spec Spec) error {
	for name := range spec.GradChannels {
		if v := g.LocalValue(name); v == nil || v.Init == nil {
			return fmt.Errorf("%w: GradChannels names %q, which is not an initializer", ErrModel, name)
		}
	}
	return nil
}
