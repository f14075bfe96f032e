// Package lowering is the seam between the gradient math and the device:
// package autodiff states each gradient as math and asks a Lowering for the
// nodes that compute the operations whose fastest form depends on where
// the graph runs: the convolutions (the forward Conv, its input gradient
// and its weight gradient) and BatchNormalization's per-channel affine
// maps. A Lowering emits through an Emitter,
// which autodiff supplies while it builds the training graph, so a
// lowering's nodes take their place and their names in the graph as if
// the rule had emitted them.
//
// autodiff imports only this package. The lowerings themselves live
// elsewhere and import no autodiff: Plain (here), the portable forms every
// execution provider runs, is what autodiff uses when its Spec names none;
// package cpu holds the forms chosen per shape and thread count for ONNX
// Runtime's CPU kernels (Winograd, the windowed weight gradients, the
// NCHWc layout, depthwise or Mul-and-Add affine maps).
// train.EngineSpec picks one per device.
package lowering

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// Lowering emits the convolutions of a training graph.
type Lowering interface {
	// ConvForward emits Y = Conv(X, W, B) (B nil when absent; W of shape
	// [M, C/g, k…], X's channel and spatial sizes static) with geometry
	// geo, its output named out, and returns Y; nil keeps the forward node
	// as the model's Conv.
	ConvForward(e Emitter, X, W, B *graph.Value, geo shapes.Geom, out string) *graph.Value
	// ConvInputGrad returns dX of Y = Conv(X, W) from G = dY; xs is X's
	// shape (channel and spatial sizes static).
	ConvInputGrad(e Emitter, G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value
	// ConvWeightGrad returns dW (shape ws = [M, C/g, k…]) of Y = Conv(X, W)
	// from X and G = dY. ConvTranspose's rule calls it with the roles of X
	// and dY swapped.
	ConvWeightGrad(e Emitter, X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value
}

// Normalizer is implemented by a Lowering that chooses the form of
// BatchNormalization's per-channel affine maps in a training graph (batch
// statistics); autodiff takes Plain's for a Lowering without it. Every
// vector below is per channel (axis 1 of x), of shape [C].
type Normalizer interface {
	// BNForward returns y = (x − μ)·γr + β, r = 1/√(σ²+ε) (rstd), named
	// out.
	BNForward(e Emitter, x, gamma, beta, mean, variance, rstd *graph.Value, eps float64, out string) *graph.Value
	// BNInputGrad returns g − (xc·c1 + c0), g and xc of x's shape: the
	// part of BatchNormalization's input gradient that runs over the
	// activation.
	BNInputGrad(e Emitter, g, xc, c1, c0 *graph.Value) *graph.Value
}

// Finisher is implemented by a Lowering that also rewrites the built
// graph: autodiff calls Finish once every node is emitted, before the
// graph's outputs are set (outputs are the values they will be), with the
// Emitter still emitting into g.
type Finisher interface {
	Finish(e Emitter, g *graph.Graph, outputs []*graph.Value)
}

// Checker is implemented by a Lowering whose settings can be wrong;
// autodiff calls Check before it builds.
type Checker interface {
	Check() error
}

// Emitter adds nodes to the training graph being built. Every value it
// returns has its type inferred (Shape, DType); names are unique in the
// graph. Errors abort the build: Fail and Unsupported do not return.
type Emitter interface {
	// Op adds an ai.onnx node with nout fresh outputs.
	Op(opType string, ins []*graph.Value, nout int, attrs ...*graph.Attribute) []*graph.Value
	// Op1 adds an ai.onnx node with one fresh output.
	Op1(opType string, ins []*graph.Value, attrs ...*graph.Attribute) *graph.Value
	// Named adds an ai.onnx node whose one output is named out: a name
	// from Name, or the forward output ConvForward was given.
	Named(opType string, ins []*graph.Value, out string, attrs ...*graph.Attribute) *graph.Value
	// Contrib adds a node of another domain (version: its opset) whose
	// one output, named out, has type dt and the given static shape: no
	// inference knows such ops.
	Contrib(domain string, version int64, opType string, ins []*graph.Value, out string, dt graph.DType,
		shape []int64, attrs ...*graph.Attribute) *graph.Value
	// Name returns an unused value name based on base and reserves it.
	Name(base string) string
	// Const returns an initializer holding t (one per distinct content).
	Const(t *graph.Tensor) *graph.Value
	// ConstF is a float constant of type dt (Float or Double).
	ConstF(dt graph.DType, shape []int64, vals []float64) *graph.Value
	// I64 is a 1-D int64 constant.
	I64(vals ...int64) *graph.Value
	Reshape(x *graph.Value, shape []int64) *graph.Value
	Transpose(x *graph.Value, perm []int64) *graph.Value
	Unsqueeze(x *graph.Value, axes []int64) *graph.Value
	ReduceSum(x *graph.Value, axes []int64, keep bool) *graph.Value
	// Annotate writes v's inferred type into the graph's value info, for
	// ONNX Runtime's optimizer, whose fusions need shapes it cannot
	// always infer (behind contrib ops).
	Annotate(v *graph.Value)
	// Shape is v's inferred shape (−1 for an unknown dimension; nil for
	// an unknown rank); DType its element type.
	Shape(v *graph.Value) []int64
	DType(v *graph.Value) graph.DType
	// Threads is the intra-op thread count the graph will run with
	// (autodiff.Spec.Threads; 0: unknown).
	Threads() int
	// Memo returns the value stored under key by an earlier call, or
	// makes, stores and returns it: a lowering's per-graph cache (the
	// Winograd transform of an input the forward and the weight gradient
	// share).
	Memo(key any, make func() *graph.Value) *graph.Value
	// Note records the form chosen ("input:flipped"), in order
	// (autodiff.Artifacts.Lowered).
	Note(form string)
	// Fail aborts the build with an error.
	Fail(format string, args ...any)
	// Unsupported aborts the build with an error that wraps
	// autodiff.ErrUnsupported.
	Unsupported(format string, args ...any)
}
