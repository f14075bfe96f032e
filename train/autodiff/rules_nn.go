package autodiff

import (
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// gradGemm: Y = α·A′B′ + β·C (A′ = Aᵀ if transA, B′ = Bᵀ if transB).
//
//	transA,transB  dA                               dB
//	0,0            α·Gemm(dY, B, transB=1)          α·Gemm(A, dY, transA=1)
//	0,1            α·Gemm(dY, B)                    α·Gemm(dY, A, transA=1)
//	1,0            α·Gemm(B, dY, transB=1)          α·Gemm(A, dY)
//	1,1            α·Gemm(B, dY, transA=1,transB=1) α·Gemm(dY, A, transA=1,transB=1)
//
// dC = β·U(dY → C). https://onnx.ai/onnx/operators/onnx__Gemm.html
func gradGemm(c *GradCtx) []*graph.Value {
	b := c.b
	A, B, g := c.in[0], c.in[1], c.g()
	alpha := c.n.AttrFloat("alpha", 1)
	beta := float64(c.n.AttrFloat("beta", 1))
	ta, tb := c.n.AttrInt("transA", 0) != 0, c.n.AttrInt("transB", 0) != 0
	gemm := func(x, y *graph.Value, tx, ty bool) *graph.Value {
		attrs := []*graph.Attribute{}
		if tx {
			attrs = append(attrs, aI("transA", 1))
		}
		if ty {
			attrs = append(attrs, aI("transB", 1))
		}
		if alpha != 1 {
			attrs = append(attrs, aF("alpha", alpha))
		}
		return b.op1("Gemm", []*graph.Value{x, y}, attrs...)
	}
	out := make([]*graph.Value, 3)
	if c.needs(0) {
		switch {
		case !ta && !tb:
			out[0] = gemm(g, B, false, true)
		case !ta && tb:
			out[0] = gemm(g, B, false, false)
		case ta && !tb:
			out[0] = gemm(B, g, false, true)
		default:
			out[0] = gemm(B, g, true, true)
		}
	}
	if bs := b.shape(B); c.needs(1) && !ta && len(bs) == 2 && shapes.AllKnown(bs) {
		// B's output channels are its rows with transB, else its columns.
		axis := 1
		if tb {
			axis = 0
		}
		if sel := b.gradChannels(c.n, 1, bs[axis]); sel != nil {
			gk := b.gatherChannels(g, sel, 1)
			if tb {
				out[1] = gemm(gk, A, true, false)
			} else {
				out[1] = gemm(A, gk, true, false)
			}
			b.markPartial(c.n, 1, out[1], axis, sel)
		}
	}
	if c.needs(1) && out[1] == nil {
		switch {
		case !ta && !tb:
			out[1] = gemm(A, g, true, false)
		case !ta && tb:
			out[1] = gemm(g, A, true, false)
		case ta && !tb:
			out[1] = gemm(A, g, false, false)
		default:
			out[1] = gemm(g, A, true, true)
		}
	}
	if c.needs(2) {
		out[2] = b.unbroadcast(b.mulF(g, beta), c.in[2])
	}
	return out
}

func swapLast(r int) []int64 {
	p := make([]int64, r)
	for i := range p {
		p[i] = int64(i)
	}
	p[r-1], p[r-2] = p[r-2], p[r-1]
	return p
}

// gradMatMul (numpy semantics): dA = U(MatMul(dY, Bᵀ)), dB = U(MatMul(Aᵀ, dY)),
// ᵀ swapping the last two axes. A 2-D B[K,N] (a weight) takes the fast path
// dB = Gemm(Reshape(A,[−1,K]), Reshape(dY,[−1,N]), transA=1).
// https://onnx.ai/onnx/operators/onnx__MatMul.html
func gradMatMul(c *GradCtx) []*graph.Value {
	b := c.b
	A, B, g := c.in[0], c.in[1], c.g()
	ra, rb := b.rank(A), b.rank(B)
	if ra < 2 || rb < 2 {
		b.fail("%w: %v: MatMul with 1-D or unknown-rank operands (ranks %d, %d)", ErrUnsupported, c.n, ra, rb)
	}
	out := make([]*graph.Value, 2)
	if c.needs(0) {
		out[0] = b.unbroadcast(b.op1("MatMul", []*graph.Value{g, b.transpose(B, swapLast(rb))}), A)
	}
	if c.needs(1) {
		bs := b.shape(B)
		if rb == 2 && bs[0] >= 0 && bs[1] >= 0 {
			a2, g2 := A, g
			if ra != 2 {
				a2 = b.reshape(A, []int64{-1, bs[0]})
				g2 = b.reshape(g, []int64{-1, bs[1]})
			}
			sel := b.gradChannels(c.n, 1, bs[1])
			if sel != nil {
				g2 = b.gatherChannels(g2, sel, 1)
			}
			out[1] = b.op1("Gemm", []*graph.Value{a2, g2}, aI("transA", 1))
			if sel != nil {
				b.markPartial(c.n, 1, out[1], 1, sel)
			}
		} else {
			out[1] = b.unbroadcast(b.op1("MatMul", []*graph.Value{b.transpose(A, swapLast(ra)), g}), B)
		}
	}
	return out
}

func iota64(from, to int) []int64 {
	var out []int64
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

func concat64(parts ...[]int64) []int64 {
	var out []int64
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// convGeomOf resolves the geometry of a forward conv/pool node, failing
// when the input's spatial shape is not static.
func (c *GradCtx) convGeom() (shapes.Geom, []int64) {
	b := c.b
	xs := b.shape(c.in[0])
	if g, ok := b.fwdGeom[c.n]; ok && xs != nil && shapes.AllKnown(xs[1:]) {
		return g, xs
	}
	fn := c.fn
	if fn == nil {
		b.fail("autodiff: %v: no forward node", c.n)
	}
	g, ok := b.types.ConvGeom(fn, xs)
	if !ok || xs == nil || !shapes.AllKnown(xs[1:]) {
		b.fail("%w: %v: needs static channel and spatial sizes (input shape %v)", ErrUnsupported, c.n, xs)
	}
	return g, xs
}

// gradConv: Y = Conv(X[N,C,S…], W[M,C/g,k…], B[M]) with strides s, pads
// (pb, pe), dilations d, group g, output spatial size O.
//
//	dX = ConvTranspose(dY, W, s, pads, d, g, output_padding = (H+pb+pe−d(k−1)−1) mod s)
//	dW = the correlation of X with dY (the convolution trick)
//	dB = ReduceSum(dY, [0, 2, …])
//
// dX and dW come from the Lowering (Spec.Lowering), which may emit other
// forms of the same values (lowering/cpu: the flipped-kernel Conv,
// Winograd, the windowed weight gradients).
//
// https://onnx.ai/onnx/operators/onnx__Conv.html, docs/GRADIENTS.md "Convolution".
func gradConv(c *GradCtx) []*graph.Value {
	b := c.b
	geo, xs := c.convGeom()
	X, W, g := c.in[0], c.in[1], c.g()
	ws := b.shape(W)
	if ws == nil || !shapes.AllKnown(ws) {
		b.fail("%w: %v: weight shape must be static", ErrUnsupported, c.n)
	}
	sp := len(xs) - 2
	out := make([]*graph.Value, 3)
	// With dY = u·a (a [M] along the channels): dX is linear in dY and in
	// W's output axis, dW and db in dY, so a scales W's rows for dX and the
	// rows of dW and db.
	u, a := b.foldChannelScale(g, ws)
	var aW *graph.Value // a as [M, 1, 1, …]
	if a == nil {
		u = g
	} else {
		b.convForms = append(b.convForms, "scale:folded")
		s := []int64{ws[0]}
		for range ws[1:] {
			s = append(s, 1)
		}
		aW = b.reshape(a, s)
	}
	if c.needs(0) {
		Wx := W
		if a != nil {
			Wx = b.mul(W, aW)
		}
		out[0] = b.lower().ConvInputGrad(emitter{b}, u, Wx, geo, xs)
	}
	if c.needs(1) {
		if sel := b.convGradChannels(c, geo, ws); sel != nil {
			// Only the selected output channels (Spec.GradChannels): the
			// same formulation on dY's slices of those channels.
			k := int64(len(sel))
			wk := append([]int64{k}, ws[1:]...)
			out[1] = b.lower().ConvWeightGrad(emitter{b}, X, b.gatherChannels(u, sel, 1), geo, wk)
			if a != nil {
				s := append([]int64{k}, make([]int64, len(ws)-1)...)
				for i := range s[1:] {
					s[1+i] = 1
				}
				out[1] = b.mul(out[1], b.reshape(b.gatherChannels(a, sel, 0), s))
			}
			b.markPartial(c.n, 1, out[1], 0, sel)
		} else {
			out[1] = b.lower().ConvWeightGrad(emitter{b}, X, u, geo, ws)
			if a != nil {
				out[1] = b.mul(out[1], aW)
			}
		}
	}
	if c.needs(2) {
		out[2] = b.reduceSum(u, append([]int64{0}, iota64(2, 2+sp)...), false)
		if a != nil {
			out[2] = b.mul(out[2], a)
		}
	}
	if a != nil {
		b.removeDead(g)
	}
	return out
}

// convGradChannels returns the output channels a Conv's weight gradient is
// restricted to (Spec.GradChannels), nil for the whole gradient; grouped
// convolutions keep the whole gradient.
func (b *builder) convGradChannels(c *GradCtx, geo shapes.Geom, ws []int64) []int64 {
	if geo.Group != 1 {
		return nil
	}
	return b.gradChannels(c.n, 1, ws[0])
}

// gradConvTranspose: Y = ConvTranspose(X[N,Ci,S…], W[Ci,Co/g,k…], B).
// dX = Conv(dY, W, same strides, pads, dilations, group); dW by the
// convolution trick with dY as the input and X as the output gradient;
// dB = ReduceSum(dY, [0, 2, …]).
// https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
func gradConvTranspose(c *GradCtx) []*graph.Value {
	b := c.b
	if c.n.Attr("output_shape") != nil {
		b.fail("%w: %v: ConvTranspose with output_shape; export with explicit pads", ErrUnsupported, c.n)
	}
	geo, xs := c.convGeom()
	X, W, g := c.in[0], c.in[1], c.g()
	ws := b.shape(W)
	if ws == nil || !shapes.AllKnown(ws) {
		b.fail("%w: %v: weight shape must be static", ErrUnsupported, c.n)
	}
	sp := len(xs) - 2
	out := make([]*graph.Value, 3)
	if c.needs(0) {
		out[0] = b.op1("Conv", []*graph.Value{g, W},
			aIs("kernel_shape", geo.K), aIs("strides", geo.S), aIs("dilations", geo.D),
			aIs("pads", concat64(geo.PB, geo.PE)), aI("group", geo.Group))
	}
	if c.needs(1) {
		out[1] = b.lower().ConvWeightGrad(emitter{b}, g, X, geo, ws)
	}
	if c.needs(2) {
		out[2] = b.reduceSum(g, append([]int64{0}, iota64(2, 2+sp)...), false)
	}
	return out
}

// fwdMaxPool adds the Indices output to the forward MaxPool.
func fwdMaxPool(b *builder, n *graph.Node, p *planned) *graph.Node {
	if !p.onPath[n] {
		return b.copyNode(n, nil, nil)
	}
	x := b.mapped(n.Input(0))
	idxName := ""
	if o := n.Output(1); o != nil {
		idxName = o.Name
	} else {
		idxName = b.name(n.Output(0).Name + "/indices")
	}
	fn := b.emit("MaxPool", []*graph.Value{x}, []string{n.Output(0).Name, idxName}, n.Attrs...)
	b.vmap[n.Output(0)] = fn.Output(0)
	if o := n.Output(1); o != nil {
		b.vmap[o] = fn.Output(1)
	}
	b.auxSet(n, "indices", fn.Output(1))
	return fn
}

// gradMaxPool: with I the forward's Indices output (flat positions in X),
// dX = Reshape(ScatterElements(zeros[Size(X)], Reshape(I,[−1]),
// Reshape(dY,[−1]), axis=0, reduction="add"), Shape(X)). reduction="add"
// (opset 16) sums the gradient of overlapping windows.
// https://onnx.ai/onnx/operators/onnx__MaxPool.html
func gradMaxPool(c *GradCtx) []*graph.Value {
	b := c.b
	I := c.aux["indices"]
	if I == nil {
		b.fail("autodiff: %v: no indices", c.n)
	}
	return []*graph.Value{b.scatterAdd(c.in[0], I, c.g())}
}

// scatterAdd returns a tensor shaped like x, zero except that the values of
// g are added at the flat positions idx (same shape as g).
func (b *builder) scatterAdd(x, idx, g *graph.Value) *graph.Value {
	dt := b.dtype(g)
	var zeros *graph.Value
	if s := b.shape(x); s != nil && shapes.AllKnown(s) {
		zeros = b.op1("ConstantOfShape", []*graph.Value{b.i64(graph.NumElements(s))},
			aT("value", floatTensor(dt, []int64{1}, []float64{0})))
	} else {
		size := b.unsqueeze(b.op1("Size", []*graph.Value{x}), []int64{0})
		zeros = b.op1("ConstantOfShape", []*graph.Value{size}, aT("value", floatTensor(dt, []int64{1}, []float64{0})))
	}
	flatI := b.reshape(idx, []int64{-1})
	flatG := b.reshape(g, []int64{-1})
	s := b.op1("ScatterElements", []*graph.Value{zeros, flatI, flatG}, aI("axis", 0), aS("reduction", "add"))
	return b.reshapeLike(s, x)
}

// gradAveragePool: AveragePool is linear. With 1/count per output position
// computed in the graph from constants (AveragePool(ones)/Conv(ones, ones),
// which matches the forward's own divisor for every count_include_pad and
// ceil_mode setting), dX = ConvTranspose(dY/count, ones[C,1,k…], group=C,
// same strides and dilations, pads chosen so the result has X's size).
// https://onnx.ai/onnx/operators/onnx__AveragePool.html
func gradAveragePool(c *GradCtx) []*graph.Value {
	b := c.b
	geo, xs := c.convGeom()
	g := c.g()
	ys := b.shape(c.out[0])
	if ys == nil || !shapes.AllKnown(ys[1:]) {
		b.fail("%w: %v: output shape unknown", ErrUnsupported, c.n)
	}
	dt := b.dtype(g)
	sp := len(xs) - 2
	C := xs[1]
	img := concat64([]int64{1, 1}, xs[2:])
	onesImg := b.constF(dt, img, fill(graph.NumElements(img), 1))
	kk := concat64([]int64{1, 1}, geo.K)
	onesK := b.constF(dt, kk, fill(graph.NumElements(kk), 1))
	peC := make([]int64, sp)
	for i := range peC {
		oh := ys[2+i]
		e := max(0, (oh-1)*geo.S[i]+geo.D[i]*(geo.K[i]-1)+1-(xs[2+i]+geo.PB[i]+geo.PE[i]))
		peC[i] = geo.PE[i] + e
	}
	inb := b.op1("Conv", []*graph.Value{onesImg, onesK}, aIs("kernel_shape", geo.K), aIs("strides", geo.S),
		aIs("dilations", geo.D), aIs("pads", concat64(geo.PB, peC)))
	avg1 := b.op1("AveragePool", []*graph.Value{onesImg}, c.fn.Attrs...)
	scale := b.div(avg1, inb)
	gs := b.mul(g, scale)
	peT := make([]int64, sp)
	op := make([]int64, sp)
	for i := range peT {
		t := geo.S[i]*(ys[2+i]-1) + geo.D[i]*(geo.K[i]-1) + 1 - geo.PB[i] - xs[2+i]
		if t >= 0 {
			peT[i] = t
		} else {
			op[i] = -t
		}
	}
	wk := concat64([]int64{C, 1}, geo.K)
	onesW := b.constF(dt, wk, fill(graph.NumElements(wk), 1))
	dx := b.op1("ConvTranspose", []*graph.Value{gs, onesW}, aIs("kernel_shape", geo.K), aIs("strides", geo.S),
		aIs("dilations", geo.D), aIs("pads", concat64(geo.PB, peT)), aIs("output_padding", op), aI("group", C))
	return []*graph.Value{dx}
}

func fill(n int64, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// gradGlobalAveragePool: dX = Expand(dY, Shape(X)) / ∏spatial.
// https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html
func gradGlobalAveragePool(c *GradCtx) []*graph.Value {
	b := c.b
	xs := b.shape(c.in[0])
	if xs == nil || !shapes.AllKnown(xs[2:]) {
		b.fail("%w: %v: spatial size must be static", ErrUnsupported, c.n)
	}
	e := b.op1("Expand", []*graph.Value{c.g(), b.shapeOf(c.in[0])})
	return []*graph.Value{b.mulF(e, 1/float64(graph.NumElements(xs[2:])))}
}

// bnAxes returns the axes BatchNormalization reduces over: all but 1.
func bnAxes(r int) []int64 { return append([]int64{0}, iota64(2, r)...) }

// fwdBatchNormalization lowers BatchNormalization. BNInference: the node
// itself in inference form (training_mode dropped, one output). BNTraining:
// batch statistics, composed as
//
//	μ = ReduceMean(x, axes), xc = x − μ, σ² = ReduceMean(xc·xc, axes), r = 1/√(σ²+ε),
//	y = (x − μ)·γr + β = x·γr + (β − μγr)
//
// with μ and σ² (biased) as the outputs "bn_mean/<scale>", "bn_var/<scale>".
// The map y is the Lowering's (lowering.Normalizer): Plain's is ONNX
// Runtime's one-pass BatchNormalization kernel on the batch statistics,
// five passes over the activation instead of the seven of x̂ = xc·r,
// y = x̂·γ + β; package cpu's also a depthwise Conv or a Mul and an Add.
// xc is kept for the backward. (σ² as
// ReduceSumSquare(xc)/M would save the product's pass, but with ONNX
// Runtime's ReduceSumSquare the gradients of testdata/resnet_small_train.onnx
// miss PyTorch's by more than the 1e-4 that ReduceMean keeps;
// bench/RESULTS.md, section "Tried, not kept".)
func fwdBatchNormalization(b *builder, n *graph.Node, p *planned) *graph.Node {
	for i := 1; i < len(n.Outputs()); i++ {
		if o := n.Output(i); o != nil && len(o.Uses()) > 0 {
			b.fail("%w: %v: its running-statistics output %q is used by the model", ErrUnsupported, n, o.Name)
		}
		for _, out := range b.orig.Outputs {
			if out == n.Output(i) && i > 0 {
				b.fail("%w: %v: its statistics output %q is a graph output", ErrUnsupported, n, out.Name)
			}
		}
	}
	eps := float64(n.AttrFloat("epsilon", 1e-5))
	x, gamma, beta := b.mapped(n.Input(0)), b.mapped(n.Input(1)), b.mapped(n.Input(2))
	yName := n.Output(0).Name
	if b.spec.BN == BNInference {
		fn := b.emit("BatchNormalization", []*graph.Value{x, gamma, beta, b.mapped(n.Input(3)), b.mapped(n.Input(4))},
			[]string{yName}, aF("epsilon", float32(eps)))
		b.vmap[n.Output(0)] = fn.Output(0)
		return fn
	}
	r := b.rank(x)
	if r < 2 {
		b.fail("%w: %v: input rank unknown", ErrUnsupported, n)
	}
	axes := bnAxes(r)
	dt := b.dtype(x)
	mean := b.reduceMean(x, axes, true)
	xc := b.sub(x, mean)
	variance := b.reduceMean(b.mul(xc, xc), axes, true)
	scale := n.Input(1).Name
	mOut := b.name("bn_mean/" + scale)
	vOut := b.name("bn_var/" + scale)
	mean1 := b.emit("Squeeze", []*graph.Value{mean, b.i64(axes...)}, []string{mOut}).Output(0)
	var1 := b.emit("Squeeze", []*graph.Value{variance, b.i64(axes...)}, []string{vOut}).Output(0)
	rstd := b.op1("Reciprocal", []*graph.Value{b.op1("Sqrt", []*graph.Value{b.add(var1, b.scalarF(dt, eps))})})
	y := b.normalizer().BNForward(emitter{b}, x, gamma, beta, mean1, var1, rstd, eps, yName)
	b.vmap[n.Output(0)] = y
	per := int64(-1)
	if xs := b.shape(x); xs != nil && shapes.AllKnown(xs[2:]) {
		per = graph.NumElements(xs[2:])
	}
	st := BNStat{Node: n.Name, Scale: scale, MeanOut: mOut, VarOut: vOut, PerExample: per,
		// ONNX momentum weights the old value (rm ← m·rm + (1−m)·mean,
		// default 0.9); BNStat.Momentum is PyTorch's weight of the new one.
		Momentum: 1 - n.AttrFloat("momentum", 0.9)}
	if v := n.Input(3); v != nil {
		st.RunningMean = v.Name
	}
	if v := n.Input(4); v != nil {
		st.RunningVar = v.Name
	}
	b.bnStats = append(b.bnStats, st)
	b.auxSet(n, "xc", xc)
	b.auxSet(n, "rstd", rstd)
	b.auxSet(n, "count", b.bnCount(x))
	return nil
}

// channelAxis returns a [C] as [C, 1, …], broadcasting along axis 1 of a
// tensor of rank r.
func (b *builder) channelAxis(a *graph.Value, r int) *graph.Value {
	if r > 2 {
		return b.unsqueeze(a, iota64(1, r-1))
	}
	return a
}

// scaleChannels returns u·ab (ab: a [C] as channelAxis gives it) and
// records it as u scaled by a, for a Conv that produced the value to fold a
// into its filter (foldChannelScale).
func (b *builder) scaleChannels(u, a, ab *graph.Value) *graph.Value {
	v := b.mul(u, ab)
	b.chanScaled[v] = chanScale{u: u, a: a}
	return v
}

// bnCount returns M = Size(x)/C, the number of values per channel of x
// [N, C, …] (C static), as a scalar of x's type.
func (b *builder) bnCount(x *graph.Value) *graph.Value {
	xs := b.shape(x)
	if xs != nil && shapes.AllKnown(xs) {
		return b.scalarF(b.dtype(x), float64(graph.NumElements(xs)/xs[1]))
	}
	if xs == nil || xs[1] < 0 {
		b.fail("%w: BatchNormalization: channel count must be static", ErrUnsupported)
	}
	size := b.cast(b.op1("Size", []*graph.Value{x}), b.dtype(x))
	return b.div(size, b.scalarF(b.dtype(x), float64(xs[1])))
}

// gradBatchNormalization. Training mode (batch statistics; xc = x − μ and
// r from the forward, x̂ = xc·r): dβ = Σ dY; dγ = Σ dY·x̂ = r·Σ dY·xc;
//
//	dX = γr·(dY − mean(dY) − x̂·mean(dY·x̂)) = γr·(dY − (xc·r²·S₁/M + S₀/M))
//
// with S₀ = Σ dY, S₁ = Σ dY·xc (PyTorch's formulation). dY − (xc·c₁ + c₀)
// (c₁ = r²S₁/M, c₀ = S₀/M) is the Lowering's (lowering.Normalizer; Plain's
// is one BatchNormalization kernel and a Sub). The factor γr is left to a Conv that produced x where
// that is cheaper (scaleChannels, foldChannelScale). Inference mode
// (running statistics): dX = dY·γ/√(rv+ε); dγ = Σ dY·(x − rm)/√(rv+ε);
// dβ = Σ dY. Sums and means run over every axis but 1. https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
func gradBatchNormalization(c *GradCtx) []*graph.Value {
	b := c.b
	x, g := c.in[0], c.g()
	r := b.rank(x)
	if r < 2 {
		b.fail("%w: %v: input rank unknown", ErrUnsupported, c.n)
	}
	axes := bnAxes(r)
	out := make([]*graph.Value, 5)
	dt := b.dtype(x)
	if xc := c.aux["xc"]; xc != nil {
		rstd, count := c.aux["rstd"], c.aux["count"]
		s0 := b.reduceSum(g, axes, false)
		s1 := b.reduceSum(b.mul(g, xc), axes, false)
		if c.needs(1) {
			out[1] = b.mul(s1, rstd)
		}
		if c.needs(2) {
			out[2] = s0
		}
		if c.needs(0) {
			a1 := b.mul(c.in[1], rstd) // [C]
			a := b.channelAxis(a1, r)
			c1 := b.div(b.mul(s1, b.mul(rstd, rstd)), count)
			c0 := b.div(s0, count)
			u := b.normalizer().BNInputGrad(emitter{b}, g, xc, c1, c0)
			out[0] = b.scaleChannels(u, a1, a)
		}
		return out
	}
	eps := float64(c.n.AttrFloat("epsilon", 1e-5))
	inv := b.op1("Reciprocal", []*graph.Value{b.op1("Sqrt", []*graph.Value{b.add(c.in[4], b.scalarF(dt, eps))})})
	if c.needs(0) {
		k := b.mul(c.in[1], inv)
		out[0] = b.scaleChannels(g, k, b.channelAxis(k, r))
	}
	if c.needs(1) {
		xhat := b.mul(b.sub(x, b.unsqueeze(c.in[3], axes)), b.unsqueeze(inv, axes))
		out[1] = b.reduceSum(b.mul(g, xhat), axes, false)
	}
	if c.needs(2) {
		out[2] = b.reduceSum(g, axes, false)
	}
	return out
}

// fwdLayerNormalization adds the Mean and InvStdDev outputs when the node
// is on the gradient path.
func fwdLayerNormalization(b *builder, n *graph.Node, p *planned) *graph.Node {
	if !p.onPath[n] {
		return b.copyNode(n, nil, nil)
	}
	var ins []*graph.Value
	for _, in := range n.Inputs() {
		ins = append(ins, b.mappedOrNil(in))
	}
	names := []string{n.Output(0).Name, "", ""}
	for i := 1; i < 3; i++ {
		if o := n.Output(i); o != nil {
			names[i] = o.Name
		} else {
			names[i] = b.name(n.Output(0).Name + []string{"", "/mean", "/invstd"}[i])
		}
	}
	fn := b.emit("LayerNormalization", ins, names, n.Attrs...)
	for i, o := range n.Outputs() {
		if o != nil {
			b.vmap[o] = fn.Output(i)
		}
	}
	b.auxSet(n, "mean", fn.Output(1))
	b.auxSet(n, "invstd", fn.Output(2))
	return fn
}

// gradLayerNormalization (normalizing over [axis, rank)): with
// x̂ = (x−μ)·r and h = dY·γ: dγ = U(dY·x̂), dβ = U(dY) (sums over the
// leading axes), dX = r·(h − mean(h) − x̂·mean(h·x̂)) (means over the
// normalized axes). https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
func gradLayerNormalization(c *GradCtx) []*graph.Value {
	b := c.b
	x, g := c.in[0], c.g()
	r := b.rank(x)
	if r < 1 {
		b.fail("%w: %v: input rank unknown", ErrUnsupported, c.n)
	}
	dt := b.dtype(x)
	ax := shapes.NormAxis(c.n.AttrInt("axis", -1), r)
	mean := b.cast(c.aux["mean"], dt)
	rstd := b.cast(c.aux["invstd"], dt)
	xhat := b.mul(b.sub(x, mean), rstd)
	out := make([]*graph.Value, 3)
	if c.needs(1) {
		out[1] = b.unbroadcast(b.mul(g, xhat), c.in[1])
	}
	if c.needs(2) {
		out[2] = b.unbroadcast(g, c.in[2])
	}
	if c.needs(0) {
		norm := iota64(int(ax), r)
		h := b.mul(g, c.in[1])
		hm := b.reduceMean(h, norm, true)
		hxm := b.reduceMean(b.mul(h, xhat), norm, true)
		out[0] = b.mul(rstd, b.sub(b.sub(h, hm), b.mul(xhat, hxm)))
	}
	return out
}
