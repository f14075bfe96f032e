package cpu

import (
	"math"
	"slices"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
)

// NCHWc: ONNX Runtime's CPU execution provider has convolution kernels on a
// blocked layout, NCHWc: the channels split into blocks of B (16 with
// AVX-512, 8 with AVX2), a tensor [N, C, H, W] stored as [N, C/B, H, W, B].
// ORT's own graph optimizer uses them only for Conv nodes with constant
// weights (it reorders the weights once); a training graph's weights are
// inputs, so the lowering emits them itself when Lowering.NCHWcBlock is
// set (the graph then needs an ONNX Runtime with these contrib kernels and
// that block size; train.EngineSpec sets it to the runtime's own, the
// zero value does not), reordering the weights in the graph on every run:
//
//	Xb = ReorderInput(X)                                  [N, C, H, W] blocked
//	Wb = Reshape(ReorderInput(Reshape(ReorderInput(Reshape(W, [M, C, K, 1])), [1, M, C·K, 1])), [M, C, k…])
//	                                                      OIHWBiBo: [M/B, C/B, K, B(c), B(m)]
//	Y  = ReorderOutput(nchwc.Conv(Xb, Wb, B), channels=M)
//
// (K = ∏k). The weight reorder is two MLAS reorders on the thread pool (the
// first blocks C, the second M) rather than a Transpose moving B(m)
// innermost, which is several times slower. The flipped input gradient is
// the same with W′ = flip(W)ᵀ (nchwcFilterFlipped).
//
// Including every reorder, the NCHWc forward and flipped input gradient are
// faster than the plain Conv on ResNet-18's 64- to 256-channel layers and
// tie at 512 channels, and a whole training step takes less time
// (bench/RESULTS.md, sections "Conv formulations per layer" and "What
// changed (commits)"). The weight gradient keeps its plain forms: the
// convolution trick on the NCHWc kernels (TestConvFormTimings's "dW trick
// nchwc") is slower than the best windowed form at every layer, and needs
// a batch that is a multiple of the block.

const nchwcDomain = "com.microsoft.nchwc"

// nchwcApplies reports whether a Conv of input shape xs and weight shape ws
// [M, C, kh, kw] with geometry geo runs on the NCHWc kernels: 2-D, float,
// group 1, channel counts multiples of the block, and a kernel larger than
// 1×1 (a 1×1 Conv is one Gemm, cheaper than the reorders around it;
// bench/RESULTS.md, section "Conv formulations per layer").
func (b *builder) nchwcApplies(xs, ws []int64, geo shapes.Geom, dt graph.DType) bool {
	B := b.spec.NCHWcBlock
	if B <= 0 || dt != graph.Float || len(xs) != 4 || len(ws) != 4 || !shapes.AllKnown(ws) || geo.Group != 1 {
		return false
	}
	M, C := ws[0], ws[1]
	return xs[1] == C && C%B == 0 && M%B == 0 && len(geo.K) == 2 && graph.NumElements(geo.K) > 1
}

// nchwc emits one com.microsoft.nchwc node with output shape shape (float).
func (b *builder) nchwc(op string, ins []*graph.Value, shape []int64, attrs ...*graph.Attribute) *graph.Value {
	return b.nchwcNamed(op, ins, b.Name("ad/nchwc_"+op), shape, attrs...)
}

// nchwcNamed is nchwc with the output named out (reserved by the caller).
func (b *builder) nchwcNamed(op string, ins []*graph.Value, out string, shape []int64,
	attrs ...*graph.Attribute) *graph.Value {
	return b.Contrib(nchwcDomain, 1, op, ins, out, graph.Float, shape, attrs...)
}

// nchwcFilter reorders a filter W [O, I, k…] (O and I multiples of the block)
// to the OIHWBiBo layout of the NCHWc Conv.
func (b *builder) nchwcFilter(W *graph.Value, O, I int64, k []int64) *graph.Value {
	K := graph.NumElements(k)
	// ReorderInput of W as an image batch [O, I, K, 1] blocks I:
	// [O, I/B, K, B(i)]; ReorderInput of that as one image of O channels
	// and I·K pixels blocks O: [O/B, I/B, K, B(i), B(o)]. Both reorders run
	// on ONNX Runtime's thread pool; a Transpose moving B(o) innermost would
	// copy one float at a time on one thread, several times slower
	// (bench/RESULTS.md, section "2 threads on the slower host").
	r := b.nchwc("ReorderInput", []*graph.Value{b.Reshape(W, []int64{O, I, K, 1})}, []int64{O, I, K, 1})
	r = b.nchwc("ReorderInput", []*graph.Value{b.Reshape(r, []int64{1, O, I * K, 1})}, []int64{1, O, I * K, 1})
	return b.Reshape(r, slices.Concat([]int64{O, I}, k))
}

// nchwcConv emits Y = Conv(X, W[M, C, k…], bias) with explicit geometry on
// the NCHWc kernels (X and Y in plain NCHW); Wb is W already reordered by
// nchwcFilter. ys is Y's shape, name Y's name ("": a fresh one).
func (b *builder) nchwcConv(X, Wb, bias *graph.Value, M int64, geo shapes.Geom, ys []int64, name string) *graph.Value {
	if name == "" {
		name = b.Name("ad/nchwc_ReorderOutput")
	}
	xb := b.nchwc("ReorderInput", []*graph.Value{X}, b.Shape(X))
	ins := []*graph.Value{xb, Wb}
	if bias != nil {
		ins = append(ins, bias)
	}
	yb := b.nchwc("Conv", ins, ys, aIs("kernel_shape", geo.K), aIs("strides", geo.S), aIs("dilations", geo.D),
		aIs("pads", slices.Concat(geo.PB, geo.PE)), aI("group", 1))
	return b.nchwcNamed("ReorderOutput", []*graph.Value{yb}, name, ys, aI("channels", M))
}

// convForward emits a forward Conv in the Winograd form where that is
// chosen (winograd.go), on the NCHWc kernels where they apply
// (NCHWcBlock), and returns nil (the model's Conv) elsewhere.
func (b *builder) convForward(x, w, bias *graph.Value, geo shapes.Geom, out string) *graph.Value {
	xs, ws := b.Shape(x), b.Shape(w)
	if wp, ok := winograd(b.spec.Forward, xs, ws, geo, b.DType(x)); ok {
		b.Note("forward:" + ConvWinograd)
		return b.winoForward(x, w, bias, wp, ws[0], ws[1], out)
	}
	if b.spec.NCHWcBlock <= 0 || !b.nchwcApplies(xs, ws, geo, b.DType(x)) || !shapes.AllKnown(xs[1:]) {
		return nil
	}
	M, C := ws[0], ws[1]
	ys := []int64{xs[0], M, 0, 0}
	for i := range geo.K {
		ys[2+i] = shapes.PoolOut(xs[2+i], geo.K[i], geo.S[i], geo.D[i], geo.PB[i], geo.PE[i], false)
	}
	y := b.nchwcConv(x, b.nchwcFilter(w, M, C, geo.K), bias, M, geo, ys, out)
	b.Note("forward:nchwc")
	return y
}

// nchwcFilterFlipped is nchwcFilter of W′ = flip(W)ᵀ [C, M, k…] for W [M, C, k…]
// without transposing W first: the first reorder blocks M (W as one image
// of M channels and C·K pixels: [M/B, C, K, B(m)]), the second C (M/B
// images of C channels and K·B pixels: [M/B, C/B, K, B(m), B(c)]); what is
// left is to swap the two block axes, a Transpose moving runs of K·B²
// floats, and to reverse K, a Slice moving runs of B². A Transpose of W
// itself would move runs of only K floats, which takes longer
// (bench/RESULTS.md, section "Padding").
func (b *builder) nchwcFilterFlipped(W *graph.Value, M, C int64, k []int64) *graph.Value {
	B := b.spec.NCHWcBlock
	K := graph.NumElements(k)
	r := b.nchwc("ReorderInput", []*graph.Value{b.Reshape(W, []int64{1, M, C * K, 1})}, []int64{1, M, C * K, 1})
	r = b.nchwc("ReorderInput", []*graph.Value{b.Reshape(r, []int64{M / B, C, K * B, 1})}, []int64{M / B, C, K * B, 1})
	r = b.Transpose(b.Reshape(r, []int64{M / B, C / B, K * B * B}), []int64{1, 0, 2})
	r = b.Reshape(r, []int64{C / B, M / B, K, B * B})
	r = b.Op1("Slice", []*graph.Value{r, b.I64(-1), b.I64(math.MinInt64), b.I64(2), b.I64(-1)})
	return b.Reshape(r, slices.Concat([]int64{C, M}, k))
}

// convInputGradNCHWc is the flipped input gradient (stride 1) on the NCHWc
// kernels: dX = Conv(dY, flip(W)ᵀ, pads K−1−p) with W′ [C, M, k…].
func (b *builder) convInputGradNCHWc(G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	ws := b.Shape(W)
	M, C := ws[0], ws[1]
	flipped := shapes.Geom{K: geo.K, S: []int64{1, 1}, D: geo.D, Group: 1, PB: make([]int64, 2), PE: make([]int64, 2)}
	for i := range geo.K {
		ke := geo.D[i]*(geo.K[i]-1) + 1
		flipped.PB[i], flipped.PE[i] = ke-1-geo.PB[i], ke-1-geo.PE[i]
	}
	dxShape := append([]int64{b.Shape(G)[0]}, xs[1:]...)
	dX := b.nchwcConv(G, b.nchwcFilterFlipped(W, M, C, geo.K), nil, C, flipped, dxShape, "")
	return dX
}

// polyphase is the plan of a strided Conv's input gradient as stride-1
// convolutions on the NCHWc kernels (convInputGradPolyphase): per spatial
// axis, one entry per phase a ∈ [0, s).
type polyphase struct {
	C, M   int64      // X's and dY's channels
	xs, gs []int64    // X's and dY's shapes
	s      [2]int64   // strides
	u      [2]int64   // rows (columns) of every phase's output: ⌈H/s⌉
	ph     [2][]phase // per axis, per phase
}

// phase: the kernel taps r, r+s, …, r+s(T−1) of one output phase a meet dY
// at offsets running backwards from q0 (a + pb = q0·s + r).
type phase struct {
	r, t, padB, padE int64
}

// polyphasePlan returns the plan of the polyphase input gradient of a Conv
// (X shape xs, W shape ws, dY shape gs) or nil where it does not apply:
// the NCHWc kernels apply (nchwcApplies), some stride > 1, dilation 1,
// every kernel extent ≥ its stride (so that every phase has a tap) and the
// spatial sizes static.
func (b *builder) polyphasePlan(xs, ws, gs []int64, geo shapes.Geom, dt graph.DType) *polyphase {
	if !b.nchwcApplies(xs, ws, geo, dt) || gs == nil || len(gs) != 4 || !shapes.AllKnown(xs[2:]) ||
		!shapes.AllKnown(gs[1:]) {
		return nil
	}
	p := &polyphase{C: ws[1], M: ws[0], xs: xs, gs: gs}
	strided := false
	for i := 0; i < 2; i++ {
		s, k, pb := geo.S[i], geo.K[i], geo.PB[i]
		if geo.D[i] != 1 || k < s {
			return nil
		}
		strided = strided || s > 1
		H, L := xs[2+i], gs[2+i]
		p.s[i], p.u[i] = s, (H+s-1)/s
		for a := int64(0); a < s; a++ {
			// dX[s·u+a] = Σ_t W[r+s·t]·dY[u+q0−t], t < T: a correlation
			// of dY with the taps reversed, padded by T−1−q0 in front.
			r, q0 := (a+pb)%s, (a+pb)/s
			T := (k - r + s - 1) / s
			ph := phase{r: r, t: T, padB: T - 1 - q0}
			ph.padE = p.u[i] - L - ph.padB + T - 1
			if ph.padB < 0 || ph.padE < 0 {
				return nil
			}
			p.ph[i] = append(p.ph[i], ph)
		}
	}
	if !strided {
		return nil
	}
	return p
}

// convInputGradPolyphase is the input gradient of a strided Conv as s₀·s₁
// stride-1 convolutions of dY on the NCHWc kernels, one per output phase
// (a, c): dX[s·u+a, s·v+c] = Conv(dY, W′_ac)[u, v], where W′_ac [C, M, T_a, T_c]
// holds the taps of Wᵀ that meet phase (a, c), reversed (a Slice with step
// −s). Together the phases do the arithmetic of the ConvTranspose (each tap
// once) at the speed of forward convolutions instead of ConvTranspose's
// col2im. The phase outputs, still blocked [N, C/B, U, V, B], are
// interleaved by two Concats over new axes ([N, C/B, U, s, V, s, B] is
// [N, C/B, sU, sV, B]), reordered to NCHW once and cropped to X's size.
// The timings on ResNet-18's 3×3 stride-2 layers (64→128, 128→256,
// 256→512 channels on 28, 14, 7 pixels) are in bench/RESULTS.md, section
// "2 threads on the slower host".
func (b *builder) convInputGradPolyphase(G, W *graph.Value, p *polyphase) *graph.Value {
	B := b.spec.NCHWcBlock
	C, M, N := p.C, p.M, p.gs[0]
	Wt := b.Transpose(W, []int64{1, 0, 2, 3}) // [C, M, kh, kw]
	Gb := b.nchwc("ReorderInput", []*graph.Value{G}, p.gs)
	var rows []*graph.Value
	for _, pa := range p.ph[0] {
		var cols []*graph.Value
		for _, pc := range p.ph[1] {
			w := b.Op1("Slice", []*graph.Value{Wt, b.I64(pa.r+p.s[0]*(pa.t-1), pc.r+p.s[1]*(pc.t-1)),
				b.I64(math.MinInt64, math.MinInt64), b.I64(2, 3), b.I64(-p.s[0], -p.s[1])})
			k := []int64{pa.t, pc.t}
			y := b.nchwc("Conv", []*graph.Value{Gb, b.nchwcFilter(w, C, M, k)}, []int64{N, C, p.u[0], p.u[1]},
				aIs("kernel_shape", k), aIs("strides", []int64{1, 1}), aIs("dilations", []int64{1, 1}),
				aIs("pads", []int64{pa.padB, pc.padB, pa.padE, pc.padE}), aI("group", 1))
			cols = append(cols, b.Reshape(y, []int64{-1, C / B, p.u[0], p.u[1], 1, B}))
		}
		row := cols[0]
		if len(cols) > 1 {
			row = b.Op1("Concat", cols, aI("axis", 4))
		}
		rows = append(rows, b.Unsqueeze(row, []int64{3}))
	}
	full := rows[0]
	if len(rows) > 1 {
		full = b.Op1("Concat", rows, aI("axis", 3))
	}
	H, Wd := p.s[0]*p.u[0], p.s[1]*p.u[1]
	full = b.Reshape(full, []int64{-1, C, H, Wd})
	dX := b.nchwc("ReorderOutput", []*graph.Value{full}, []int64{N, C, H, Wd}, aI("channels", C))
	if H != p.xs[2] || Wd != p.xs[3] {
		dX = b.Op1("Slice", []*graph.Value{dX, b.I64(0, 0), b.I64(p.xs[2], p.xs[3]), b.I64(2, 3)})
	}
	return dX
}
