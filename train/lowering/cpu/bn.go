package cpu

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/train/lowering"
)

// BatchNormalization's per-channel affine maps in training mode
// (lowering.Normalizer), in one of three forms by thread count and plane:
//
//   - ONNX Runtime's one-pass BatchNormalization kernel (Plain's form), the
//     x·α + β form PyTorch's CPU kernel uses; it runs on one thread;
//   - from MulAddThreads threads, a Mul and an Add, which ONNX Runtime runs
//     on its pool: on 2 threads the kernel is still the faster, from 4 the
//     Mul and the Add overtake it (bench/RESULTS.md, section "A 16-core
//     Xeon: thread scaling");
//   - below that, on float planes of DepthwiseMinPlane or more, a depthwise
//     1×1 Conv, which ONNX Runtime fuses with what follows it: the
//     forward's ReLU, or the residual Add and ReLU after it, and the
//     backward's Add (dY − t as dY + (−t)) into one pass. On 2 threads that
//     wins on 28×28 planes, in the forward and the backward, and loses from
//     14×14 down, more the smaller the plane (ONNX Runtime's depthwise
//     kernel pays per image and channel; bench/RESULTS.md, section "around
//     the convolutions").

// MulAddThreads is the intra-op thread count from which the affine maps
// are a Mul and an Add.
const MulAddThreads = 4

// DepthwiseMinPlane is the smallest spatial plane (H·W) on which the
// affine maps are depthwise Convs: they win at 28×28 (784) and lose at
// 14×14 (196).
const DepthwiseMinPlane = 512

func mulAdd(e lowering.Emitter) bool { return e.Threads() >= MulAddThreads }

// depthwise reports whether the affine maps on x are depthwise 1×1 Convs:
// float x (ONNX Runtime's Conv has no double kernel) of rank 4, its channel
// count static and its plane at least DepthwiseMinPlane, below
// MulAddThreads.
func depthwise(e lowering.Emitter, x *graph.Value) bool {
	xs := e.Shape(x)
	return !mulAdd(e) && e.DType(x) == graph.Float && len(xs) == 4 && xs[1] > 0 &&
		shapes.AllKnown(xs[2:]) && xs[2]*xs[3] >= DepthwiseMinPlane
}

// BNForward computes α = γr and β − μα, then x·α + (β − μα) as a Mul and
// an Add or a depthwise Conv; otherwise Plain's kernel.
func (c Lowering) BNForward(e lowering.Emitter, x, gamma, beta, mean, variance, rstd *graph.Value, eps float64,
	out string) *graph.Value {
	mt, dw := mulAdd(e), depthwise(e, x)
	if !mt && !dw {
		return lowering.Plain{}.BNForward(e, x, gamma, beta, mean, variance, rstd, eps, out)
	}
	alpha := e.Op1("Mul", []*graph.Value{gamma, rstd})
	shift := e.Op1("Sub", []*graph.Value{beta, e.Op1("Mul", []*graph.Value{mean, alpha})})
	if mt {
		return channelAffine(e, x, alpha, shift, out)
	}
	return channelConv(e, x, alpha, shift, out)
}

// BNInputGrad is g − (xc·c1 + c0) with a Mul and an Add, or g + the
// depthwise Conv xc·(−c1) − c0 (ONNX Runtime fuses a Conv with a following
// Add, not a Sub, where its shape inference knows both inputs' shapes to
// be equal; it loses them behind its contrib NCHWc ops, so they are
// stated); otherwise Plain's kernel.
func (c Lowering) BNInputGrad(e lowering.Emitter, g, xc, c1, c0 *graph.Value) *graph.Value {
	switch {
	case mulAdd(e):
		return e.Op1("Sub", []*graph.Value{g, channelAffine(e, xc, c1, c0, "")})
	case depthwise(e, xc):
		t := channelConv(e, xc, e.Op1("Neg", []*graph.Value{c1}), e.Op1("Neg", []*graph.Value{c0}), "")
		e.Annotate(t)
		e.Annotate(g)
		return e.Op1("Add", []*graph.Value{t, g})
	}
	return lowering.Plain{}.BNInputGrad(e, g, xc, c1, c0)
}

// channelConv returns x·a + c (a and c per channel, [C]) as the depthwise
// 1×1 Conv(x, Reshape(a, [C, 1, 1, 1]), c, group C), named out ("" for a
// fresh name).
func channelConv(e lowering.Emitter, x, a, c *graph.Value, out string) *graph.Value {
	C := e.Shape(x)[1]
	ins := []*graph.Value{x, e.Reshape(a, []int64{C, 1, 1, 1}), c}
	attrs := []*graph.Attribute{graph.IntsAttr("kernel_shape", []int64{1, 1}), graph.IntAttr("group", C)}
	if out == "" {
		return e.Op1("Conv", ins, attrs...)
	}
	return e.Named("Conv", ins, out, attrs...)
}

// channelAffine returns x·a + c with a and c per channel ([C], along axis
// 1 of x) as a Mul and an Add, named out ("" for a fresh name).
func channelAffine(e lowering.Emitter, x, a, c *graph.Value, out string) *graph.Value {
	if r := len(e.Shape(x)); r > 2 {
		axes := make([]int64, r-2)
		for i := range axes {
			axes[i] = int64(i + 1)
		}
		a, c = e.Unsqueeze(a, axes), e.Unsqueeze(c, axes)
	}
	ins := []*graph.Value{e.Op1("Mul", []*graph.Value{x, a}), c}
	if out == "" {
		return e.Op1("Add", ins)
	}
	return e.Named("Add", ins, out)
}
