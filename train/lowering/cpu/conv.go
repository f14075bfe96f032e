package cpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/train/lowering"
)

// Formulations of the Conv gradients (Lowering). The empty string chooses
// per shape (see chooseInputForm and chooseWeightForm).
const (
	// ConvInputTranspose: dX = ConvTranspose(dY, W) (any stride).
	ConvInputTranspose = "convtranspose"
	// ConvInputFlipped: dX = Conv(dY, W with spatially flipped kernel and
	// swapped channel axes, pads d(k−1)−p). Stride 1 only.
	ConvInputFlipped = "flipped"

	// ConvWeightTrick: dW = Conv(Xᵀ, dYᵀ) with batch and channel axes
	// swapped (the classic trick; any group).
	ConvWeightTrick = "trick"
	// ConvWeightGemm: dW = one Gemm of dYᵀ [M, O·N] with the im2col matrix
	// of Xᵀ [C·K, O·N] (K = ∏k windows of X made by Pad and Slice).
	ConvWeightGemm = "gemm"
	// ConvWeightBatched: a batched MatMul of dY [N, M, O] with X's windows
	// [N, C·K, O] transposed, summed over N (group 1: all windows from one
	// grouped Conv with one-hot filters; otherwise per kernel offset).
	ConvWeightBatched = "bmm"
	// ConvWeightValid: per kernel offset, one Gemm over only the output
	// positions where the offset meets X inside its bounds (no padding
	// zeros).
	ConvWeightValid = "valid"

	// ConvWinograd: Winograd's F(4×4, 3×3) (winograd.go) for 3×3
	// stride-1 pad-1 layers, as the forward (Lowering.Forward), the input
	// gradient and the weight gradient form.
	ConvWinograd = "winograd"
	// ConvForwardDirect: the forward Conv as a Conv (or its NCHWc lowering).
	ConvForwardDirect = "direct"
)

// Lowering is the lowering.Lowering for ONNX Runtime's CPU execution
// provider: it selects the formulations of the forward Conv and of the
// Conv gradients, per shape where a field is empty. A form that does not
// apply to a node (ConvInputFlipped at stride > 1, the windowed weight
// forms without static spatial sizes) falls back to the general one
// (ConvInputTranspose, ConvWeightTrick). Every form is made of standard
// ai.onnx ops, which any build and device runs, except where NCHWcBlock is
// set. The zero value chooses every form per shape without NCHWc: the graph
// that exported training artifacts hold.
type Lowering struct {
	Input  string // "", ConvInputTranspose, ConvInputFlipped or ConvWinograd
	Weight string // "", ConvWeightTrick, ConvWeightGemm, ConvWeightBatched, ConvWeightValid or ConvWinograd
	// Forward is the forward Conv's form in the training graph: "" (chosen
	// per shape), ConvForwardDirect or ConvWinograd (where it applies).
	Forward string
	// NCHWcBlock, when positive, runs 2-D float Conv nodes with a kernel
	// larger than 1×1 and channel counts that are multiples of it (group 1)
	// on ONNX Runtime's blocked-layout kernels (the CPU execution provider's
	// com.microsoft.nchwc Conv, ReorderInput and ReorderOutput): the
	// forward Conv, and the input gradient where the flipped form applies.
	// It must be the block size of the ONNX Runtime that runs the graph on
	// this machine (16 with AVX-512, 8 with AVX2), which
	// onnxrt.NCHWcBlockSize reports. Zero or negative keeps standard
	// ai.onnx Conv; train.EngineSpec fills in the runtime's block size.
	// See nchwc.go.
	NCHWcBlock int64
}

// Check refuses an unknown form.
func (c Lowering) Check() error {
	switch c.Input {
	case "", ConvInputTranspose, ConvInputFlipped, ConvWinograd:
	default:
		return fmt.Errorf("unknown Conv input-gradient form %q", c.Input)
	}
	switch c.Weight {
	case "", ConvWeightTrick, ConvWeightGemm, ConvWeightBatched, ConvWeightValid, ConvWinograd:
	default:
		return fmt.Errorf("unknown Conv weight-gradient form %q", c.Weight)
	}
	switch c.Forward {
	case "", ConvForwardDirect, ConvWinograd:
	default:
		return fmt.Errorf("unknown Conv forward form %q", c.Forward)
	}
	return nil
}

// builder emits one lowering's nodes through the Emitter autodiff gives.
type builder struct {
	lowering.Emitter
	spec Lowering
}

var (
	aI  = graph.IntAttr
	aIs = graph.IntsAttr
)

// ConvForward emits the forward Conv in the Winograd form where that is
// chosen (winograd.go), on the NCHWc kernels where they apply (NCHWcBlock),
// and returns nil (the model's Conv) elsewhere.
func (l Lowering) ConvForward(e lowering.Emitter, X, W, B *graph.Value, geo shapes.Geom, out string) *graph.Value {
	return (&builder{e, l}).convForward(X, W, B, geo, out)
}

// ConvInputGrad emits dX (convInputGrad).
func (l Lowering) ConvInputGrad(e lowering.Emitter, G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	return (&builder{e, l}).convInputGrad(G, W, geo, xs)
}

// Finish rewrites the built graph for ONNX Runtime's CPU thread pool
// (rewriteBatchedTransposes).
func (l Lowering) Finish(e lowering.Emitter, g *graph.Graph, outputs []*graph.Value) {
	(&builder{e, l}).rewriteBatchedTransposes(g, outputs)
}

// ConvWeightGrad emits dW (convWeightGrad).
func (l Lowering) ConvWeightGrad(e lowering.Emitter, X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value {
	return (&builder{e, l}).convWeightGrad(X, G, geo, ws)
}

// chooseInputForm picks dX's formulation: the flipped Conv wherever it
// applies (stride 1, pads ≤ d(k−1)), ConvTranspose elsewhere. ONNX
// Runtime's Conv kernel is faster than its ConvTranspose on every
// ResNet-18 layer shape, by more the smaller the plane, and the flipped
// Conv can also run on the NCHWc kernels (nchwc.go); bench/RESULTS.md
// "Conv formulations per layer" has the timings.
func (b *builder) chooseInputForm(geo shapes.Geom) string {
	form := b.spec.Input
	if form == ConvInputTranspose {
		return form
	}
	for i := range geo.K {
		ke := geo.D[i]*(geo.K[i]-1) + 1
		if geo.S[i] != 1 || geo.PB[i] > ke-1 || geo.PE[i] > ke-1 {
			return ConvInputTranspose
		}
	}
	return ConvInputFlipped
}

// convInputGrad returns dX of Y = Conv(X, W) from G = dY (xs: X's shape):
// the ConvTranspose form (lowering.ConvInputTranspose) or the flipped one.
//
// Flipped form (stride 1): with K = d(k−1)+1 the dilated kernel extent,
//
//	W′ = Slice(Reshape(Transpose(Reshape(W, [g, M/g, C/g, k…]), [0,2,1,…]), [C, M/g, k…]), steps −1 on k…)
//	dX = Conv(G, W′, pads (K−1−pb, K−1−pe), dilations d, group g)
//
// i.e. the correlation of dY with the kernel rotated by 180°, an ordinary
// forward convolution (ONNX Runtime runs it as fast as the forward).
func (b *builder) convInputGrad(G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	if ws := b.Shape(W); ws != nil {
		if p, ok := winograd(b.spec.Input, xs, ws, geo, b.DType(G)); ok {
			b.Note("input:" + ConvWinograd)
			return b.winoInputGrad(G, W, p, ws[0], ws[1])
		}
	}
	sp := len(xs) - 2
	form := b.chooseInputForm(geo)
	if form == ConvInputTranspose && b.spec.Input != ConvInputTranspose {
		if plan := b.polyphasePlan(xs, b.Shape(W), b.Shape(G), geo, b.DType(G)); plan != nil {
			b.Note("input:polyphase")
			b.Note("input:nchwc")
			return b.convInputGradPolyphase(G, W, plan)
		}
	}
	b.Note("input:" + form)
	if form == ConvInputFlipped && b.nchwcApplies(xs, b.Shape(W), geo, b.DType(G)) {
		b.Note("input:nchwc")
		return b.convInputGradNCHWc(G, W, geo, xs)
	}
	if form == ConvInputTranspose {
		return lowering.ConvInputTranspose(b.Emitter, G, W, geo, xs)
	}
	ws := b.Shape(W)
	M, Cg, grp := ws[0], ws[1], geo.Group
	spAxes := lowering.Iota(2, 2+sp)
	var Wt *graph.Value
	if grp == 1 {
		Wt = b.Transpose(W, slices.Concat([]int64{1, 0}, spAxes))
	} else {
		Wt = b.Reshape(W, slices.Concat([]int64{grp, M / grp, Cg}, geo.K))
		Wt = b.Transpose(Wt, slices.Concat([]int64{0, 2, 1}, lowering.Iota(3, 3+sp)))
		Wt = b.Reshape(Wt, slices.Concat([]int64{Cg * grp, M / grp}, geo.K))
	}
	flip := false
	for _, k := range geo.K {
		if k > 1 {
			flip = true
		}
	}
	if flip && b.DType(W) == graph.Float {
		// Reversing the flattened kernel axis reverses every spatial axis.
		// A MatMul with the K×K anti-identity is exact (one product by 1,
		// the rest by 0; a non-finite weight turns its row into NaN) and
		// fast; a Slice with negative steps copies element by element and
		// is several times slower (bench/RESULTS.md, section "Conv
		// formulations per layer").
		K := graph.NumElements(geo.K)
		J := make([]float64, K*K)
		for i := range K {
			J[i*K+K-1-i] = 1
		}
		ts := b.Shape(Wt)
		Wt = b.Op1("MatMul", []*graph.Value{b.Reshape(Wt, []int64{-1, K}), b.ConstF(graph.Float, []int64{K, K}, J)})
		Wt = b.Reshape(Wt, ts)
	} else if flip {
		starts, ends, steps := make([]int64, sp), make([]int64, sp), make([]int64, sp)
		for i := range starts {
			starts[i], ends[i], steps[i] = -1, math.MinInt64, -1
		}
		Wt = b.Op1("Slice", []*graph.Value{Wt, b.I64(starts...), b.I64(ends...), b.I64(spAxes...), b.I64(steps...)})
	}
	pb, pe := make([]int64, sp), make([]int64, sp)
	for i := range pb {
		ke := geo.D[i]*(geo.K[i]-1) + 1
		pb[i], pe[i] = ke-1-geo.PB[i], ke-1-geo.PE[i]
	}
	return b.Op1("Conv", []*graph.Value{G, Wt}, aIs("kernel_shape", geo.K), aIs("dilations", geo.D),
		aIs("pads", slices.Concat(pb, pe)), aI("group", grp))
}

// batchedMinOut and batchedMinC bound where ConvWeightBatched beats
// ConvWeightGemm: its per-image products [M, O]·[O, C] need a large output
// plane O and enough channels C to be efficient.
const (
	batchedMinOut = 400
	batchedMinC   = 8
)

// chooseWeightForm picks dW's formulation for the output spatial shape os
// (nil if not static; xs is X's spatial shape, nil if not static):
//
//   - the trick (a Conv of Xᵀ with dYᵀ) where shapes are not static and for
//     grouped convolutions: ONNX Runtime runs it as an im2col with a kernel
//     as large as the plane, far slower than the windowed forms, so it is
//     the fallback only;
//   - valid where the padding makes up validMinSkip or more of the gemm
//     form's products (3×3 pad 1: 31 % at 4×4, 18 % at 7×7, 9 % at 14×14):
//     it skips those products;
//   - bmm (per-image products) on large output planes (batchedMinOut,
//     batchedMinC), and for a 1×1 kernel at stride 2 on a large input
//     plane, where gemm would transpose all of X for the quarter it reads;
//   - gemm (one product over the im2col windows) elsewhere.
//
// The per-layer timings behind these bounds are in bench/RESULTS.md
// ("Conv formulations per layer", "operand order and the valid form").
func (b *builder) chooseWeightForm(geo shapes.Geom, Cg int64, xs, os []int64) string {
	if os == nil || !shapes.AllKnown(os) {
		return ConvWeightTrick
	}
	if form := b.spec.Weight; form != "" {
		return form
	}
	if geo.Group != 1 {
		return ConvWeightTrick
	}
	if xs != nil && shapes.AllKnown(xs) && 1-validShare(geo, xs, os) >= validMinSkip {
		return ConvWeightValid
	}
	plane := graph.NumElements(os) // a 1×1 kernel: the input plane it reads from
	if graph.NumElements(geo.K) == 1 {
		plane *= graph.NumElements(geo.S)
	}
	if plane >= batchedMinOut && Cg >= batchedMinC {
		return ConvWeightBatched
	}
	return ConvWeightGemm
}

// validMinSkip is the share of padding products from which the valid
// weight-gradient form is chosen (chooseWeightForm).
const validMinSkip = 0.15

// validShare returns the share of the (output position, kernel offset)
// pairs of a convolution with input spatial shape xs and output os whose
// input position lies inside X (not in its padding): the product over the
// axes of each axis's share.
func validShare(geo shapes.Geom, xs, os []int64) float64 {
	share := 1.0
	for i := range geo.K {
		var in int64
		for o := int64(0); o < os[i]; o++ {
			for j := int64(0); j < geo.K[i]; j++ {
				if p := geo.InputAt(i, o, j); p >= 0 && p < xs[i] {
					in++
				}
			}
		}
		share *= float64(in) / float64(os[i]*geo.K[i])
	}
	return share
}

// convWeightGrad computes the weight gradient of Y = Conv(X, W) (W of shape
// ws = [M, C/g, k…]) from X and G = dY in the formulation chooseWeightForm
// picks. ConvTranspose's rule calls it with the roles of X and dY swapped.
func (b *builder) convWeightGrad(X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value {
	gs := b.Shape(G)
	var os []int64
	if gs != nil && len(gs) == len(ws) {
		os = gs[2:]
	}
	var sp []int64
	if xs := b.Shape(X); xs != nil && len(xs) == len(ws) {
		sp = xs[2:]
		if p, ok := winograd(b.spec.Weight, xs, ws, geo, b.DType(G)); ok && gs != nil && slices.Equal(gs[2:], xs[2:]) {
			b.Note("weight:" + ConvWinograd)
			return b.winoWeightGrad(X, G, p, ws[0], ws[1])
		}
	}
	form := b.chooseWeightForm(geo, ws[1], sp, os)
	if form == ConvWeightValid {
		// The valid form declines an offset that meets no input and
		// sizes that are not static; the gemm form takes those.
		if dW := b.convWeightGradValid(X, G, geo, ws, os); dW != nil {
			b.Note("weight:" + form)
			return dW
		}
		form = ConvWeightGemm
	}
	b.Note("weight:" + form)
	switch form {
	case ConvWeightGemm:
		return b.convWeightGradGemm(X, G, geo, ws, os)
	case ConvWeightBatched:
		return b.convWeightGradBatched(X, G, geo, ws, os)
	}
	return lowering.ConvWeightTrick(b.Emitter, X, G, geo, ws)
}

// convWindows returns the K = ∏k kernel-offset windows of x, whose spatial
// axes start at axis a0: x padded by (pb, pe) on them, then for offset
// (j…) the slice starting at j·d with step s and os elements — the values
// that offset of the kernel meets at every output position. A window equal
// to x itself is x (no copy). Offsets are in row-major kernel order.
func (b *builder) convWindows(x *graph.Value, a0 int, geo shapes.Geom, os []int64) []*graph.Value {
	xs := b.Shape(x)
	sp := len(geo.K)
	src := x
	padded := false
	for i := 0; i < sp; i++ {
		if geo.PB[i] != 0 || geo.PE[i] != 0 {
			padded = true
		}
	}
	if padded {
		pads := make([]int64, 2*len(xs))
		for i := 0; i < sp; i++ {
			pads[a0+i] = geo.PB[i]
			pads[len(xs)+a0+i] = geo.PE[i]
		}
		src = b.Op1("Pad", []*graph.Value{x, b.I64(pads...)})
	}
	axes := lowering.Iota(a0, a0+sp)
	var out []*graph.Value
	off := make([]int64, sp)
	for {
		starts, ends := make([]int64, sp), make([]int64, sp)
		whole := true
		for i := 0; i < sp; i++ {
			starts[i] = off[i] * geo.D[i]
			ends[i] = starts[i] + geo.S[i]*(os[i]-1) + 1
			// The unpadded x is the window when it starts at the first
			// real element and covers x exactly with step 1.
			if geo.S[i] != 1 || starts[i] != geo.PB[i] || os[i] != xs[a0+i] {
				whole = false
			}
		}
		switch {
		case whole:
			out = append(out, x)
		default:
			out = append(out, b.Op1("Slice",
				[]*graph.Value{src, b.I64(starts...), b.I64(ends...), b.I64(axes...), b.I64(geo.S...)}))
		}
		if !next(off, geo.K) {
			return out
		}
	}
}

// convWeightGradGemm (ConvWeightGemm): with Xᵀ = Transpose(X) [C, S…, N]
// (per group: [g, C/g, N, S…]), dYᵀ likewise, and the windows w_j of Xᵀ
// (convWindows, one per kernel offset j),
//
//	cols = Reshape(Concat_j(Unsqueeze(w_j)), [C/g·K, O·N])        per group
//	dW   = Reshape(Gemm(Reshape(dYᵀ, [M/g, O·N]), cols, transB=1), [M, C/g, k…])
//
// (a batched MatMul over the groups when g > 1): one large product with
// the reduction over batch and output positions inside.
func (b *builder) convWeightGradGemm(X, G *graph.Value, geo shapes.Geom, ws, os []int64) *graph.Value {
	xs := b.Shape(X)
	sp := len(geo.K)
	grp, M, Cg := geo.Group, ws[0], ws[1]
	K := graph.NumElements(geo.K)
	if grp == 1 && Cg == 1 && K > 1 && b.DType(X) == graph.Float {
		return b.convWeightGradCols(X, G, geo, M, 1)
	}
	var XT, GT *graph.Value
	// a0: first spatial axis of XT; cat: the axis the windows stack on.
	a0, cat := 1, int64(1)
	if grp == 1 {
		// [C, S…, N]: the batch innermost, so that every window is a copy
		// of runs of N floats (with [C, N, S…] a 4×4 window copies runs
		// of 4, a stride-2 one single floats).
		perm := append(lowering.Iota(1, 2+sp), 0)
		XT = b.Transpose(X, perm)
		GT = b.Reshape(b.Transpose(G, perm), []int64{M, -1})
	} else {
		a0, cat = 3, 2
		perm := slices.Concat([]int64{1, 2, 0}, lowering.Iota(3, 3+sp))
		XT = b.Transpose(b.Reshape(X, slices.Concat([]int64{0, grp, Cg}, xs[2:])), perm)
		GT = b.Transpose(b.Reshape(G, slices.Concat([]int64{0, grp, M / grp}, os)), perm)
		GT = b.Reshape(GT, []int64{grp, M / grp, -1})
	}
	var cols *graph.Value
	if grp == 1 && gatherWindows && K > 1 {
		cols = b.convWindowsGather(XT, geo, os)
	} else if wins := b.convWindows(XT, a0, geo, os); len(wins) == 1 {
		cols = wins[0]
	} else {
		us := make([]*graph.Value, len(wins))
		for i, w := range wins {
			us[i] = b.Unsqueeze(w, []int64{cat})
		}
		cols = b.Op1("Concat", us, aI("axis", cat))
	}
	var R *graph.Value
	if grp == 1 && windowsFirst(Cg*K, M) {
		// Here the windows have more rows than dY and go first
		// (windowsFirst; bench/RESULTS.md, section "operand order and the
		// valid form"). A MatMul, not a Gemm: ONNX Runtime's
		// GemmTransposeFusion turns Transpose(Gemm(cols, dYᵀ)) back into
		// Gemm(dYᵀ, cols).
		cols = b.Reshape(cols, []int64{Cg * K, -1})
		R = b.Transpose(b.Op1("MatMul", []*graph.Value{cols, b.Transpose(GT, []int64{1, 0})}), []int64{1, 0})
	} else if grp == 1 {
		cols = b.Reshape(cols, []int64{Cg * K, -1})
		R = b.Op1("Gemm", []*graph.Value{GT, cols}, aI("transB", 1))
	} else {
		cols = b.Reshape(cols, []int64{grp, Cg * K, -1})
		R = b.Op1("MatMul", []*graph.Value{GT, b.Transpose(cols, []int64{0, 2, 1})})
	}
	return b.Reshape(R, slices.Concat([]int64{M, Cg}, geo.K))
}

// convWeightGradValid (ConvWeightValid), group 1: with Xᵀ = [C, ∏S, N] and
// dYᵀ = [M, ∏O, N] as in the gemm form, and for kernel offset j the output
// positions R_j where it meets X inside its bounds (input position
// o·s + j·d − pb), paired with those input positions I_j,
//
//	dW[:, :, j] = Gemm(Gather(dYᵀ, R_j, axis 1), Gather(Xᵀ, I_j, axis 1), transB)
//
// (each gathered to [M or C, |R_j|·N]), stacked over j. The products skip
// the padding's zeros that the gemm form multiplies: 31 % of the work of a
// 3×3 pad-1 layer at 4×4, 18 % at 7×7. Returns nil (the caller falls back) when an
// offset meets no input at all or a size is not static.
func (b *builder) convWeightGradValid(X, G *graph.Value, geo shapes.Geom, ws, os []int64) *graph.Value {
	xs := b.Shape(X)
	sp := len(geo.K)
	if geo.Group != 1 || xs == nil || len(xs) != 2+sp || !shapes.AllKnown(xs[1:]) || !shapes.AllKnown(os) {
		return nil
	}
	M, C := ws[0], ws[1]
	S := xs[2:]
	type offset struct {
		out, in []int64 // flat output and input positions
	}
	var offs []offset // in row-major kernel order
	j := make([]int64, sp)
	for {
		o := make([]int64, sp)
		var of offset
		for {
			var fo, fi int64
			inside := true
			for i := 0; i < sp; i++ {
				p := geo.InputAt(i, o[i], j[i])
				if p < 0 || p >= S[i] {
					inside = false
					break
				}
				fo = fo*os[i] + o[i]
				fi = fi*S[i] + p
			}
			if inside {
				of.out = append(of.out, fo)
				of.in = append(of.in, fi)
			}
			if !next(o, os) {
				break
			}
		}
		if len(of.out) == 0 {
			return nil
		}
		offs = append(offs, of)
		if !next(j, geo.K) {
			break
		}
	}
	// Every gathered block is a run of N floats.
	perm := append(lowering.Iota(1, 2+sp), 0)
	XT := b.Reshape(b.Transpose(X, perm), []int64{C, graph.NumElements(S), -1})
	GT := b.Reshape(b.Transpose(G, perm), []int64{M, graph.NumElements(os), -1})
	parts := make([]*graph.Value, len(offs))
	for i, of := range offs {
		Gg := b.Reshape(b.gatherPositions(GT, of.out, graph.NumElements(os)), []int64{M, -1})
		Xg := b.Reshape(b.gatherPositions(XT, of.in, graph.NumElements(S)), []int64{C, -1})
		parts[i] = b.Unsqueeze(b.Op1("Gemm", []*graph.Value{Gg, Xg}, aI("transB", 1)), []int64{2})
	}
	// Stacked along a new last axis: one Concat writes [M, C, K], where a
	// Concat along a first axis would need a Transpose to [M, C, K] after
	// it and take longer (bench/RESULTS.md, section "operand order and the
	// valid form").
	R := parts[0]
	if len(parts) > 1 {
		R = b.Op1("Concat", parts, aI("axis", 2))
	}
	return b.Reshape(R, slices.Concat([]int64{M, C}, geo.K))
}

// gatherPositions gathers x [·, size, ·] at the positions at along axis 1;
// x itself where at is every position in order (the centre offset of a
// stride-1 "same" convolution), so that no Gather copies x for nothing.
func (b *builder) gatherPositions(x *graph.Value, at []int64, size int64) *graph.Value {
	identity := int64(len(at)) == size
	for i, p := range at {
		identity = identity && p == int64(i)
	}
	if identity {
		return x
	}
	return b.Op1("Gather", []*graph.Value{x, b.Const(graph.NewInt64("", []int64{int64(len(at))}, at))}, aI("axis", 1))
}

// gatherWindows makes the gemm form (group 1) take its windows from one
// Gather (convWindowsGather) rather than Slices and a Concat; the
// benchmark's "dW gemm slices" variant turns it off to measure the latter.
var gatherWindows = true

// convWeightGradCols computes dW for group 1 (float) with the windows
// (im2col) of X from one grouped Conv whose filters are one-hot: group C,
// E[c·K+j, 0] = e_j gives channel c's window at kernel offset j, so that
// ONNX Runtime's multithreaded Conv writes cols [N, C·K, O…] where
// convWindows' Pad and Slices copy on one thread; then
//
//	dWᵀ = ReduceSum(MatMul(Reshape(cols, [N, C·K, O]), Transpose(Reshape(dY, [N, M, O]))), axis 0)
//
// (dW = Reshape(Transpose(dWᵀ), [M, C, k…])), or with the windows as the
// first operand where they have more rows than dY (windowsFirst: the
// 64-channel 28×28 layers of ResNet-18, not the 1→64 stem, whose C·K = 9
// rows are fewer than its M = 64; bench/RESULTS.md, section "operand
// order and the valid form").
//
// The products are the batched form's; only the windows differ: one
// multithreaded Conv writes them where the Pad and Slices of convWindows
// copy on one thread, so the form keeps scaling with the thread count. On
// 2 threads the two kinds of windows tie per layer and the whole step is
// still faster with the Conv's, at more peak memory (a layer's windows
// exist at once); bench/RESULTS.md, section "A 16-core Xeon: thread
// scaling", has the per-layer, whole-step and memory figures, section "2
// threads on the slower host" those of the 1→64 stem (C = 1, a plain
// Conv). A 0·x term of the one-hot sum is NaN where x is infinite: only
// on activations that already make the loss non-finite.
func (b *builder) convWeightGradCols(X, G *graph.Value, geo shapes.Geom, M, C int64) *graph.Value {
	K := graph.NumElements(geo.K)
	cols := b.convCols(X, geo, C)
	cols = b.Reshape(cols, []int64{0, C * K, -1})
	Gr := b.Reshape(G, []int64{0, M, -1})
	if !windowsFirst(C*K, M) {
		P := b.Op1("MatMul", []*graph.Value{Gr, b.Transpose(cols, []int64{0, 2, 1})})
		return b.Reshape(b.ReduceSum(P, []int64{0}, false), slices.Concat([]int64{M, C}, geo.K))
	}
	P := b.Op1("MatMul", []*graph.Value{cols, b.Transpose(Gr, []int64{0, 2, 1})})
	return b.Reshape(b.Transpose(b.ReduceSum(P, []int64{0}, false), []int64{1, 0}), slices.Concat([]int64{M, C}, geo.K))
}

// windowsFirst reports whether a weight gradient's product of dY [M, L]
// with its windows [rows, L] (L the positions it sums over) should take
// the windows as its first operand and produce dWᵀ. MLAS reads a
// product's first operand in place and packs (copies) the second, so the
// operand with more rows goes first.
func windowsFirst(rows, M int64) bool { return rows > M }

// convCols returns the windows of X [N, C, S…] (float) at every kernel
// offset as [N, C·K, O…]: a Conv with group C and the one-hot filters
// E[c·K+j, 0] = e_j.
func (b *builder) convCols(X *graph.Value, geo shapes.Geom, C int64) *graph.Value {
	K := graph.NumElements(geo.K)
	e := make([]float64, C*K*K)
	for c := range C {
		for j := range K {
			e[(c*K+j)*K+j] = 1
		}
	}
	E := b.ConstF(graph.Float, slices.Concat([]int64{C * K, 1}, geo.K), e)
	return b.Op1("Conv", []*graph.Value{X, E}, aIs("kernel_shape", geo.K), aIs("strides", geo.S),
		aIs("dilations", geo.D), aIs("pads", slices.Concat(geo.PB, geo.PE)), aI("group", C))
}

// convWindowsGather returns the im2col matrix of xt = Xᵀ [C, S…, N] as one
// Gather: xt padded by (pb, pe) on its spatial axes and flattened to
// [C, ∏(S+pb+pe), N], gathered along axis 1 at the positions every kernel
// offset j (row-major) meets at every output position o:
// Σᵢ (oᵢ·sᵢ + jᵢ·dᵢ)·∏_{l>i}(S_l+pb_l+pe_l). The result is [C, K·∏O, N],
// the same as the Concat of convWindows' windows. ONNX Runtime's Gather
// copies the runs of N floats on its thread pool, where Slice and Concat
// copy on one thread.
func (b *builder) convWindowsGather(xt *graph.Value, geo shapes.Geom, os []int64) *graph.Value {
	xs := b.Shape(xt)
	sp := len(geo.K)
	src := xt
	padded := false
	pads := make([]int64, 2*len(xs))
	ps := make([]int64, sp)
	for i := 0; i < sp; i++ {
		pads[1+i], pads[len(xs)+1+i] = geo.PB[i], geo.PE[i]
		padded = padded || geo.PB[i] != 0 || geo.PE[i] != 0
		ps[i] = xs[1+i] + geo.PB[i] + geo.PE[i]
	}
	if padded {
		src = b.Op1("Pad", []*graph.Value{xt, b.I64(pads...)})
	}
	src = b.Reshape(src, []int64{xs[0], graph.NumElements(ps), -1})
	stride := make([]int64, sp)
	st := int64(1)
	for i := sp - 1; i >= 0; i-- {
		stride[i] = st
		st *= ps[i]
	}
	var idx []int64
	j := make([]int64, sp)
	o := make([]int64, sp)
	for {
		// Every output position for offset j, row-major (next leaves o
		// at zero when it wraps around).
		for {
			var at int64
			for i := 0; i < sp; i++ {
				at += (o[i]*geo.S[i] + j[i]*geo.D[i]) * stride[i]
			}
			idx = append(idx, at)
			if !next(o, os) {
				break
			}
		}
		if !next(j, geo.K) {
			break
		}
	}
	return b.Op1("Gather", []*graph.Value{src, b.Const(graph.NewInt64("", []int64{int64(len(idx))}, idx))}, aI("axis", 1))
}

// next advances the row-major multi-index ix within the bounds lim and
// reports whether it did not wrap around (having wrapped, ix is all zero).
func next(ix, lim []int64) bool {
	for i := len(ix) - 1; i >= 0; i-- {
		ix[i]++
		if ix[i] < lim[i] {
			return true
		}
		ix[i] = 0
	}
	return false
}

// convWeightGradBatched (ConvWeightBatched): per-image products with a long
// inner dimension O and no transposition of X or dY (ONNX Runtime fuses
// the Transpose into the MatMul). Group 1 in float: the windows of all
// kernel offsets at once from convWeightGradCols. Otherwise (groups, float64,
// a 1×1 kernel whose window is X itself): with X's windows w_j (convWindows,
// one per kernel offset j, [N, C, O…]) and per group,
//
//	dW[:, :, j] = ReduceSum(MatMul(Reshape(dY, [N, M/g, O]), Transpose(Reshape(w_j, [N, C/g, O]))), axis 0)
//
// stacked over j.
func (b *builder) convWeightGradBatched(X, G *graph.Value, geo shapes.Geom, ws, os []int64) *graph.Value {
	grp, M, Cg := geo.Group, ws[0], ws[1]
	if grp == 1 && b.DType(X) == graph.Float && !geo.IdentityWindow() {
		return b.convWeightGradCols(X, G, geo, M, Cg)
	}
	var gShape, wShape, perm []int64
	if grp == 1 {
		gShape, wShape, perm = []int64{0, M, -1}, []int64{0, Cg, -1}, []int64{0, 2, 1}
	} else {
		gShape, wShape, perm = []int64{0, grp, M / grp, -1}, []int64{0, grp, Cg, -1}, []int64{0, 1, 3, 2}
	}
	Gr := b.Reshape(G, gShape)
	wins := b.convWindows(X, 2, geo, os)
	parts := make([]*graph.Value, len(wins))
	for i, w := range wins {
		p := b.Op1("MatMul", []*graph.Value{Gr, b.Transpose(b.Reshape(w, wShape), perm)})
		parts[i] = b.Reshape(b.ReduceSum(p, []int64{0}, false), []int64{M, Cg, 1})
	}
	R := parts[0]
	if len(parts) > 1 {
		R = b.Op1("Concat", parts, aI("axis", 2))
	}
	return b.Reshape(R, slices.Concat([]int64{M, Cg}, geo.K))
}
