package autodiff

import (
	"math"

	"github.com/unlearn-tool/unlearn/graph"
)

// NCHWc: ONNX Runtime's CPU execution provider has convolution kernels on a
// blocked layout, NCHWc: the channels split into blocks of B (16 with
// AVX-512, 8 with AVX2), a tensor [N, C, H, W] stored as [N, C/B, H, W, B].
// ORT's own graph optimizer uses them only for Conv nodes with constant
// weights (it reorders the weights once); a training graph's weights are
// inputs, so the builder emits them itself when Spec.ConvGrad.NCHWcBlock is
// set (the graph then needs an ONNX Runtime with these contrib kernels and
// that block size; train.NewEngine sets it to the runtime's own, Build's
// zero value does not), reordering the weights in the graph on every run:
//
//	Xb = ReorderInput(X)                                  [N, C, H, W] blocked
//	Wb = Reshape(Transpose(Reshape(ReorderInput(Reshape(W, [M, C, K, 1])), [M/B, B, C/B, K, B]),
//	             [0, 2, 3, 4, 1]), [M, C, k…])               OIHWBiBo: [M/B, C/B, K, B(c), B(m)]
//	Y  = ReorderOutput(nchwc.Conv(Xb, Wb, B), channels=M)
//
// (K = ∏k). The weight reorder is one MLAS reorder and one Transpose that
// moves a single axis (ORT's fast path); a single 6-D Transpose takes ten
// times as long. The flipped input gradient is the same with W′ =
// flip(W)ᵀ, the flip being a reversed Slice over K on the blocked filter,
// whose rows are B×B contiguous floats.
//
// Measured with ONNX Runtime 1.24, one thread (AVX-512, block 16, batch 128,
// 3×3 pad 1; bench/conv_forms.sh, bench/RESULTS.md), plain Conv against
// NCHWc including every reorder: 64 ch 28×28 63.8 against 50.1 ms, 128 ch
// 14×14 56.5 against 46.3 ms, 256 ch 7×7 56.2 against 49.0 ms, 512 ch 4×4
// 69.1 against 70.0 ms; the flipped input gradient 62.2, 56.2, 66.0, 74.5
// against 52.3, 50.2, 46.1, 70.3 ms. A whole ResNet-18 training step takes
// 9 % less CPU time on one thread and 14 % less time on two
// (bench/RESULTS.md). The weight gradient keeps its plain
// forms: the convolution trick on the NCHWc kernels (TestConvFormTimings's
// "dW trick nchwc") is slower than the best windowed form at every layer,
// and needs a batch that is a multiple of the block.

const nchwcDomain = "com.microsoft.nchwc"

// nchwcApplies reports whether a Conv of input shape xs and weight shape ws
// [M, C, kh, kw] with geometry geo runs on the NCHWc kernels: 2-D, float,
// group 1, channel counts multiples of the block, and a kernel larger than
// 1×1 (a 1×1 Conv is one Gemm, cheaper than the reorders around it: 2.1
// against 4.4 ms for 64→128 channels at 28×28, stride 2).
func (b *builder) nchwcApplies(xs, ws []int64, geo convGeom, dt graph.DType) bool {
	B := b.spec.ConvGrad.NCHWcBlock
	if B <= 0 || dt != graph.Float || len(xs) != 4 || len(ws) != 4 || !allKnown(ws) || geo.group != 1 {
		return false
	}
	M, C := ws[0], ws[1]
	return xs[1] == C && C%B == 0 && M%B == 0 && len(geo.k) == 2 && prod(geo.k) > 1
}

// nchwc emits one com.microsoft.nchwc node with output shape shape (float).
func (b *builder) nchwc(op string, ins []*graph.Value, shape []int64, attrs ...*graph.Attribute) *graph.Value {
	return b.nchwcNamed(op, ins, b.name("ad/nchwc_"+op), shape, attrs...)
}

// nchwcNamed is nchwc with the output named out (reserved by the caller).
func (b *builder) nchwcNamed(op string, ins []*graph.Value, out string, shape []int64, attrs ...*graph.Attribute) *graph.Value {
	n, err := b.g.AddNode(op, nchwcDomain, out, ins, []string{out}, attrs...)
	if err != nil {
		b.fail("autodiff: %v", err)
	}
	b.info[n.Output(0)] = &tinfo{dt: graph.Float, shape: append([]int64{}, shape...)}
	b.usedNCHWc = true
	return n.Output(0)
}

// nchwcFilter reorders a filter W [O, I, k…] (O and I multiples of the block)
// to the OIHWBiBo layout of the NCHWc Conv, kernel reversed when flip.
func (b *builder) nchwcFilter(W *graph.Value, O, I int64, k []int64, flip bool) *graph.Value {
	B := b.spec.ConvGrad.NCHWcBlock
	K := prod(k)
	// ReorderInput of W as an image batch [O, I, K, 1]: [O/B, B(o), I/B, K, B(i)].
	r := b.nchwc("ReorderInput", []*graph.Value{b.reshape(W, []int64{O, I, K, 1})}, []int64{O, I, K, 1})
	r = b.transpose(b.reshape(r, []int64{O / B, B, I / B, K, B}), []int64{0, 2, 3, 4, 1})
	if flip {
		r = b.op1("Slice", []*graph.Value{r, b.i64(-1), b.i64(math.MinInt64), b.i64(2), b.i64(-1)})
	}
	return b.reshape(r, concat64([]int64{O, I}, k))
}

// nchwcConv emits Y = Conv(X, W[M, C, k…], bias) with explicit geometry on
// the NCHWc kernels (X and Y in plain NCHW); Wb is W already reordered by
// nchwcFilter. ys is Y's shape, name Y's name ("": a fresh one). It returns
// Y and the nchwc Conv node, whose attributes are those of a plain Conv.
func (b *builder) nchwcConv(X, Wb, bias *graph.Value, M int64, geo convGeom, ys []int64, name string) (*graph.Value, *graph.Node) {
	if name == "" {
		name = b.name("ad/nchwc_ReorderOutput")
	}
	xb := b.nchwc("ReorderInput", []*graph.Value{X}, b.shape(X))
	ins := []*graph.Value{xb, Wb}
	if bias != nil {
		ins = append(ins, bias)
	}
	yb := b.nchwc("Conv", ins, ys, aIs("kernel_shape", geo.k), aIs("strides", geo.s), aIs("dilations", geo.d),
		aIs("pads", concat64(geo.pb, geo.pe)), aI("group", 1))
	fn, _ := yb.Producer()
	return b.nchwcNamed("ReorderOutput", []*graph.Value{yb}, name, ys, aI("channels", M)), fn
}

// fwdConv emits a forward Conv: on the NCHWc kernels where they apply
// (Spec.ConvGrad.NCHWcBlock), else a copy. The rule's geometry is read from
// the returned node, whose attributes are explicit.
func fwdConv(b *builder, n *graph.Node, p *planned) *graph.Node {
	if b.spec.ConvGrad.NCHWcBlock <= 0 {
		return b.copyNode(n, nil, nil)
	}
	x, w := b.mappedOrNil(n.Input(0)), b.mappedOrNil(n.Input(1))
	if x == nil || w == nil || n.Output(0) == nil || len(n.Outputs()) != 1 {
		return b.copyNode(n, nil, nil)
	}
	xs, ws := b.shape(x), b.shape(w)
	geo, ok := b.geom(n, xs)
	if !ok || !b.nchwcApplies(xs, ws, geo, b.dtype(x)) || !allKnown(xs[1:]) {
		return b.copyNode(n, nil, nil)
	}
	var bias *graph.Value
	if n.Input(2) != nil {
		bias = b.mapped(n.Input(2))
	}
	M, C := ws[0], ws[1]
	ys := []int64{xs[0], M, 0, 0}
	for i := range geo.k {
		ys[2+i] = poolOut(xs[2+i], geo.k[i], geo.s[i], geo.d[i], geo.pb[i], geo.pe[i], false)
	}
	y, fn := b.nchwcConv(x, b.nchwcFilter(w, M, C, geo.k, false), bias, M, geo, ys, n.Output(0).Name)
	b.vmap[n.Output(0)] = y
	b.convForms = append(b.convForms, "forward:nchwc")
	return fn
}

// convInputGradNCHWc is the flipped input gradient (stride 1) on the NCHWc
// kernels: dX = Conv(dY, flip(W)ᵀ, pads K−1−p) with W′ [C, M, k…].
func (b *builder) convInputGradNCHWc(G, W *graph.Value, geo convGeom, xs []int64) *graph.Value {
	ws := b.shape(W)
	M, C := ws[0], ws[1]
	K := prod(geo.k)
	Wt := b.transpose(b.reshape(W, []int64{M, C, K}), []int64{1, 0, 2})
	flipped := convGeom{k: geo.k, s: []int64{1, 1}, d: geo.d, group: 1, pb: make([]int64, 2), pe: make([]int64, 2)}
	for i := range geo.k {
		ke := geo.d[i]*(geo.k[i]-1) + 1
		flipped.pb[i], flipped.pe[i] = ke-1-geo.pb[i], ke-1-geo.pe[i]
	}
	dX, _ := b.nchwcConv(G, b.nchwcFilter(Wt, C, M, geo.k, true), nil, C, flipped, append([]int64{b.shape(G)[0]}, xs[1:]...), "")
	return dX
}
