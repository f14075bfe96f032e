package lowering

import (
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// Plain is the lowering every execution provider runs: the forward Conv
// stays a Conv, dX is a ConvTranspose and dW the convolution trick, all
// of them Conv nodes (on cuda, cuDNN's); BatchNormalization's affine maps
// are BatchNormalization kernels. autodiff uses it when its Spec
// names no Lowering; train.EngineSpec chooses it on cuda.
type Plain struct{}

// ConvForward keeps the model's Conv.
func (Plain) ConvForward(Emitter, *graph.Value, *graph.Value, *graph.Value, shapes.Geom, string) *graph.Value {
	return nil
}

// ConvInputGrad is ConvInputTranspose.
func (Plain) ConvInputGrad(e Emitter, G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	e.Note("input:convtranspose")
	return ConvInputTranspose(e, G, W, geo, xs)
}

// ConvWeightGrad is ConvWeightTrick.
func (Plain) ConvWeightGrad(e Emitter, X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value {
	e.Note("weight:trick")
	return ConvWeightTrick(e, X, G, geo, ws)
}

// BNForward is ONNX's BatchNormalization kernel in inference form on the
// batch statistics: y = (x − μ)·γ/√(σ²+ε) + β.
func (Plain) BNForward(e Emitter, x, gamma, beta, mean, variance, _ *graph.Value, eps float64,
	out string) *graph.Value {
	return e.Named("BatchNormalization", []*graph.Value{x, gamma, beta, mean, variance}, out,
		graph.FloatAttr("epsilon", float32(eps)))
}

// BNInputGrad computes xc·c1 + c0 as one BatchNormalization kernel (mean
// 0, variance 1, ε 0: scale and bias exactly c1 and c0) and subtracts it
// from g.
func (Plain) BNInputGrad(e Emitter, g, xc, c1, c0 *graph.Value) *graph.Value {
	C, dt := e.Shape(xc)[1], e.DType(xc)
	zeros, ones := make([]float64, C), make([]float64, C)
	for i := range ones {
		ones[i] = 1
	}
	bn := e.Op1("BatchNormalization", []*graph.Value{xc, c1, c0, e.ConstF(dt, []int64{C}, zeros),
		e.ConstF(dt, []int64{C}, ones)}, graph.FloatAttr("epsilon", 0))
	return e.Op1("Sub", []*graph.Value{g, bn})
}

// ConvInputTranspose returns dX of Y = Conv(X, W) from G = dY (xs: X's
// shape) as ConvTranspose(G, W, s, pads, d, g, output_padding
// (H+pb+pe−d(k−1)−1) mod s), which holds at any stride.
// https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
func ConvInputTranspose(e Emitter, G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	op := make([]int64, len(xs)-2)
	for i := range op {
		op[i] = (xs[2+i] + geo.PB[i] + geo.PE[i] - geo.D[i]*(geo.K[i]-1) - 1) % geo.S[i]
	}
	return e.Op1("ConvTranspose", []*graph.Value{G, W},
		graph.IntsAttr("kernel_shape", geo.K), graph.IntsAttr("strides", geo.S), graph.IntsAttr("dilations", geo.D),
		graph.IntsAttr("pads", slices.Concat(geo.PB, geo.PE)), graph.IntAttr("group", geo.Group),
		graph.IntsAttr("output_padding", op))
}

// ConvWeightTrick returns dW (shape ws = [M, C/g, k…]) of Y = Conv(X, W)
// from X and G = dY by the classic trick: X plays the input and G the
// weight, stride and dilation swap:
//
//	Xr = Reshape(Transpose(Reshape(X, [N,g,C/g,S…]), [2,1,0,…]), [C/g, g·N, S…])
//	Gr = Reshape(Transpose(Reshape(G, [N,g,M/g,O…]), [1,2,0,…]), [M, N, O…])
//	T  = Conv(Xr, Gr, strides=d, dilations=s, pads, group=g)   → [C/g, M, k′…], k′ ≥ k
//	dW = Transpose(Slice(T, spatial [0,k)), [1,0,…])
//
// ONNX Runtime's CPU provider runs T as an im2col with a kernel as large as
// the output plane and an output of ∏k′ positions, which is slow
// (docs/GRADIENTS.md, section "Convolution"; bench/RESULTS.md, section
// "Conv formulations per layer"); package cpu keeps it for grouped
// convolutions and shapes its other forms cannot handle.
func ConvWeightTrick(e Emitter, X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value {
	xs := e.Shape(X)
	gs := e.Shape(G)
	sp := len(xs) - 2
	grp := geo.Group
	M, Cg := ws[0], ws[1]
	var Xr, Gr *graph.Value
	if grp == 1 {
		perm := slices.Concat([]int64{1, 0}, Iota(2, 2+sp))
		Xr = e.Transpose(X, perm)
		Gr = e.Transpose(G, perm)
	} else {
		if gs == nil || !shapes.AllKnown(gs[1:]) {
			e.Unsupported("conv weight gradient needs static output shape")
		}
		perm5 := slices.Concat([]int64{2, 1, 0}, Iota(3, 3+sp))
		Xr = e.Reshape(X, slices.Concat([]int64{-1, grp, Cg}, xs[2:]))
		Xr = e.Transpose(Xr, perm5)
		Xr = e.Reshape(Xr, slices.Concat([]int64{Cg, -1}, xs[2:]))
		perm5g := slices.Concat([]int64{1, 2, 0}, Iota(3, 3+sp))
		Gr = e.Reshape(G, slices.Concat([]int64{-1, grp, M / grp}, gs[2:]))
		Gr = e.Transpose(Gr, perm5g)
		Gr = e.Reshape(Gr, slices.Concat([]int64{M, -1}, gs[2:]))
	}
	attrs := []*graph.Attribute{graph.IntsAttr("strides", geo.D), graph.IntsAttr("dilations", geo.S),
		graph.IntsAttr("pads", slices.Concat(geo.PB, geo.PE)), graph.IntAttr("group", grp)}
	if gs != nil && shapes.AllKnown(gs[2:]) {
		attrs = append(attrs, graph.IntsAttr("kernel_shape", gs[2:]))
	}
	T := e.Op1("Conv", []*graph.Value{Xr, Gr}, attrs...)
	ts := e.Shape(T)
	needSlice := ts == nil
	for i := 0; !needSlice && i < sp; i++ {
		if ts[2+i] != geo.K[i] {
			needSlice = true
		}
	}
	if needSlice {
		T = e.Op1("Slice", []*graph.Value{T, e.I64(make([]int64, sp)...), e.I64(geo.K...), e.I64(Iota(2, 2+sp)...)})
	}
	return e.Transpose(T, slices.Concat([]int64{1, 0}, Iota(2, 2+sp)))
}

// Iota returns [from, from+1, …, to−1].
func Iota(from, to int) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}
