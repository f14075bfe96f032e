package autodiff

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// chanScale is a gradient u·a with a [C] a per-channel factor (along axis 1).
type chanScale struct{ u, a *graph.Value }

// foldChannelScale returns (u, a) when the gradient g of a Conv's output
// (filter shape ws) is u·a with a per-channel factor a [M]
// (builder.scaleChannels: BatchNormalization's input gradient is
// γ/σ·(dY − …)) and folding a into the Conv's backward is cheaper than the
// product: the Mul over dY (read u, write dY) goes, two over the filter's
// size (W·a for dX, dW·a) come. So where 2·|W| < |dY|: in a batch-128
// ResNet-18 step the 64- and 128-channel layers (|W| 37 K and 147 K
// against |dY| 6.4 M and 3.2 M) and the 256-channel ones (590 K against
// 1.6 M), not the 512-channel ones (2.4 M against 1 M). A dynamic batch is
// taken as 64. (nil, nil) otherwise, or where g has other uses.
func (b *builder) foldChannelScale(g *graph.Value, ws []int64) (u, a *graph.Value) {
	cs, ok := b.chanScaled[g]
	gs := b.shape(g)
	if !ok || len(g.Uses()) > 0 || gs == nil || len(gs) != len(ws) || !shapes.AllKnown(gs[1:]) || gs[1] != ws[0] {
		return nil, nil
	}
	if as := b.shape(cs.a); len(as) != 1 || as[0] != ws[0] {
		return nil, nil
	}
	n := gs[0]
	if n < 0 {
		n = 64
	}
	if 2*graph.NumElements(ws) >= n*graph.NumElements(gs[1:]) {
		return nil, nil
	}
	return cs.u, cs.a
}
