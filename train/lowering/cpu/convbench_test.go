package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// TestConvFormTimings times the formulations of a Conv's forward and
// gradients on the layer shapes of a CIFAR-style ResNet-18 at 28×28 input
// (the measurements that conv.go and nchwc.go cite; bench/conv_forms.sh runs
// it, bench/RESULTS.md has the numbers). Each variant is a graph of its own
// in its own ONNX Runtime session: the forward Conv (plain and NCHWc), dX in
// each input form, dW in each weight form, plus the convolution trick on the
// NCHWc kernels (measured, not used). The variants of a layer run
// interleaved, one run each per round, with a pause before each run so that
// the previous session's spinning thread pool has gone idle (every session
// has its own pool; a spinning worker would take a core from the next one).
// The median over the rounds is reported. Every variant of a kind must agree
// with the first (to 1e-4 of the largest value).
//
// It runs only when UNLEARN_CONV_BENCH=1. UNLEARN_CONV_BENCH_BATCH (128),
// _THREADS (2), _ROUNDS (7), _SETTLE_MS (100) change the setup, _ONLY=i runs
// layer i alone, _DUMP=dir writes every graph to dir (for bench/ortprof),
// _CHUNKS="8 16" adds the gemm form over chunks of that many images.
func TestConvFormTimings(t *testing.T) {
	if os.Getenv("UNLEARN_CONV_BENCH") != "1" {
		t.Skip("set UNLEARN_CONV_BENCH=1 to run (bench/conv_forms.sh)")
	}
	testutil.RequireORT(t)
	envInt := func(name string, def int) int {
		if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v >= 0 {
			return v
		}
		return def
	}
	batch := int64(envInt("UNLEARN_CONV_BENCH_BATCH", 128))
	threads := envInt("UNLEARN_CONV_BENCH_THREADS", 2)
	rounds := max(envInt("UNLEARN_CONV_BENCH_ROUNDS", 7), 1)
	settle := time.Duration(envInt("UNLEARN_CONV_BENCH_SETTLE_MS", 100)) * time.Millisecond
	block := onnxrt.NCHWcBlockSize(onnxrt.Options{})

	type layer struct {
		c, m, hw, k, s, p int64
	}
	layers := []layer{
		{64, 64, 28, 3, 1, 1},   // layer1
		{64, 128, 28, 3, 2, 1},  // layer2.0.conv1
		{128, 128, 14, 3, 1, 1}, // layer2
		{128, 256, 14, 3, 2, 1}, // layer3.0.conv1
		{256, 256, 7, 3, 1, 1},  // layer3
		{256, 512, 7, 3, 2, 1},  // layer4.0.conv1
		{512, 512, 4, 3, 1, 1},  // layer4
		{64, 128, 28, 1, 2, 0},  // layer2.0.downsample
		{256, 512, 7, 1, 2, 0},  // layer4.0.downsample
		{1, 64, 28, 3, 1, 1},    // conv1 (stem)
	}
	if f := os.Getenv("UNLEARN_CONV_BENCH_ONLY"); f != "" {
		i, err := strconv.Atoi(f)
		if err != nil || i < 0 || i >= len(layers) {
			t.Fatalf("UNLEARN_CONV_BENCH_ONLY=%q: want a layer index in [0, %d)", f, len(layers))
		}
		layers = layers[i : i+1]
	}
	type variant struct {
		name string
		kind string // "forward", "dX", "dW"
		form Lowering
	}
	variants := []variant{
		{"forward Conv", "forward", Lowering{}},
		{"dX convtranspose", "dX", Lowering{Input: ConvInputTranspose}},
		{"dX flipped", "dX", Lowering{Input: ConvInputFlipped}},
		{"dW trick", "dW", Lowering{Weight: ConvWeightTrick}},
		{"dW gemm", "dW", Lowering{Weight: ConvWeightGemm}},
		{"dW bmm", "dW", Lowering{Weight: ConvWeightBatched}},
		{"dW valid", "dW", Lowering{Weight: ConvWeightValid}},
		{"dW gemm slices", "dW", Lowering{Weight: "gemm-slices"}},
		{"dW convcols gemm", "dW", Lowering{Weight: "convcols-gemm"}},
	}
	for _, n := range strings.Fields(os.Getenv("UNLEARN_CONV_BENCH_CHUNKS")) {
		variants = append(variants, variant{"dW gemm chunk " + n, "dW", Lowering{Weight: "gemm-chunk-" + n}})
	}
	if block > 0 {
		variants = append(variants,
			variant{"forward nchwc", "forward", Lowering{NCHWcBlock: block}},
			variant{"dX flipped nchwc", "dX", Lowering{Input: ConvInputFlipped, NCHWcBlock: block}},
			variant{"dW trick nchwc", "dW", Lowering{Weight: "trick-nchwc", NCHWcBlock: block}},
		)
	}
	fmt.Printf("Conv forward and gradients: batch %d, %d threads, ONNX Runtime %s (NCHWc block %d), median of %d interleaved rounds\n",
		batch, threads, onnxrt.Version(), block, rounds)
	fmt.Printf("%-22s %-18s %8s %8s  %s\n", "layer", "variant", "ms", "GFLOP/s", "forms the builder used")
	rng := rand.New(rand.NewPCG(3, 4))
	randT := func(shape ...int64) *onnxrt.Tensor {
		v := make([]float32, graph.NumElements(shape))
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		x, err := onnxrt.NewFloat32(shape, v)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Close() })
		return x
	}
	for li, l := range layers {
		geo := shapes.Geom{K: []int64{l.k, l.k}, S: []int64{l.s, l.s}, D: []int64{1, 1},
			PB: []int64{l.p, l.p}, PE: []int64{l.p, l.p}, Group: 1}
		o := (l.hw+2*l.p-l.k)/l.s + 1
		flops := 2 * float64(batch*l.m*o*o*l.c*l.k*l.k)
		feeds := map[string]*onnxrt.Tensor{
			"X": randT(batch, l.c, l.hw, l.hw), "W": randT(l.m, l.c, l.k, l.k), "G": randT(batch, l.m, o, o),
		}
		type run struct {
			v     variant
			s     *onnxrt.Session
			in    []*onnxrt.Tensor
			out   []*onnxrt.Tensor
			forms []string
			times []float64
		}
		var runs []*run
		for _, v := range variants {
			if v.form.Weight == "trick-nchwc" && (l.c%block != 0 || l.m%block != 0) {
				continue
			}
			data, inNames, forms := convBenchGraph(t, v.kind, v.form, geo, batch, l.c, l.m, l.hw, o)
			if dir := os.Getenv("UNLEARN_CONV_BENCH_DUMP"); dir != "" {
				name := fmt.Sprintf("%s/%d_%s.onnx", dir, li, strings.ReplaceAll(v.name, " ", "_"))
				if err := os.WriteFile(name, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s, err := onnxrt.NewSession(data, inNames, []string{"out"}, onnxrt.Options{Threads: threads})
			if err != nil {
				t.Fatalf("%s: %v", v.name, err)
			}
			t.Cleanup(func() { s.Close() })
			r := &run{v: v, s: s, forms: forms, out: make([]*onnxrt.Tensor, 1)}
			for _, n := range inNames {
				r.in = append(r.in, feeds[n])
			}
			runs = append(runs, r)
		}
		for round := 0; round <= rounds; round++ {
			for _, r := range runs {
				time.Sleep(settle)
				t0 := time.Now()
				if err := r.s.Run(r.in, r.out); err != nil {
					t.Fatalf("%s: %v", r.v.name, err)
				}
				if round > 0 { // round 0 warms up
					r.times = append(r.times, time.Since(t0).Seconds())
				}
			}
		}
		name := fmt.Sprintf("%d→%d %d×%d k%d s%d", l.c, l.m, l.hw, l.hw, l.k, l.s)
		ref := map[string][]float32{}
		for _, r := range runs {
			got := r.out[0].Float32s()
			if want, ok := ref[r.v.kind]; !ok {
				ref[r.v.kind] = got
			} else if d, m := maxDiff(got, want); len(got) != len(want) || d > 1e-4*m {
				t.Errorf("%s: %s differs from the first %s variant: max |Δ| %g, max |value| %g", name, r.v.name, r.v.kind, d, m)
			}
		}
		for _, r := range runs {
			slices.Sort(r.times)
			med := r.times[len(r.times)/2]
			fmt.Printf("%-22s %-18s %8.1f %8.0f  %s\n", name, r.v.name, 1e3*med, flops/med/1e9, strings.Join(r.forms, " "))
			r.out[0].Close()
		}
	}
}

// maxDiff returns max|a−b| and max|b|.
func maxDiff(a, b []float32) (d, m float64) {
	for i := range min(len(a), len(b)) {
		m = max(m, math.Abs(float64(b[i])))
		d = max(d, math.Abs(float64(a[i])-float64(b[i])))
	}
	return d, m
}

// convBenchGraph returns the serialized graph of one variant (kind forward:
// Y = Conv(X, W); dX: the input gradient from G = dY; dW: the weight
// gradient) with a dynamic batch dimension like a training graph's, its
// input names and the forms the builder used. n is the benchmark's batch,
// which only the chunked form needs.
func convBenchGraph(t *testing.T, kind string, form Lowering, geo shapes.Geom, n, c, m, hw, o int64) ([]byte, []string, []string) {
	t.Helper()
	st := autodiff.NewStandalone("convbench", 17)
	b := &builder{st.Emitter(), form}
	batch := graph.Dim{Size: -1, Param: "batch"}
	d := func(n int64) graph.Dim { return graph.Dim{Size: n} }
	input := func(name string, dims ...graph.Dim) *graph.Value {
		v, err := st.Input(name, &graph.Type{DType: graph.Float, Shape: dims})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	k := geo.K[0]
	xs := []int64{st.Sym(), c, hw, hw}
	var out *graph.Value
	var names []string
	err := st.Run(func() {
		switch kind {
		case "forward":
			X := input("X", batch, d(c), d(hw), d(hw))
			W := input("W", d(m), d(c), d(k), d(k))
			if b.nchwcApplies(b.Shape(X), b.Shape(W), geo, graph.Float) {
				ys := []int64{b.Shape(X)[0], m, o, o}
				out = b.nchwcConv(X, b.nchwcFilter(W, m, c, geo.K), nil, m, geo, ys, "")
				b.Note("forward:nchwc")
			} else {
				out = b.Op1("Conv", []*graph.Value{X, W}, aIs("kernel_shape", geo.K), aIs("strides", geo.S),
					aIs("pads", slices.Concat(geo.PB, geo.PE)))
			}
			names = []string{"X", "W"}
		case "dX":
			G := input("G", batch, d(m), d(o), d(o))
			W := input("W", d(m), d(c), d(k), d(k))
			out = b.convInputGrad(G, W, geo, xs)
			names = []string{"G", "W"}
		case "dW":
			X := input("X", batch, d(c), d(hw), d(hw))
			G := input("G", batch, d(m), d(o), d(o))
			// The measured-only forms, which the builder does not know, name
			// themselves in the forms list; the builder's forms it fills in.
			measured := true
			switch {
			case form.Weight == "trick-nchwc":
				out = convWeightGradTrickNCHWc(b, st.Sym, X, G, geo, c, m, hw, o)
			case form.Weight == "convcols-gemm":
				out = convWeightGradConvColsGemm(b, X, G, geo, c, m)
			case form.Weight == "gemm-slices":
				gatherWindows = false
				out = b.convWeightGradGemm(X, G, geo, []int64{m, c, k, k}, []int64{o, o})
				gatherWindows = true
			case strings.HasPrefix(form.Weight, "gemm-chunk-"):
				chunk, err := strconv.ParseInt(strings.TrimPrefix(form.Weight, "gemm-chunk-"), 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				out = convWeightGradGemmChunked(b, X, G, geo, n, c, m, o, chunk)
			default:
				measured = false
				out = b.convWeightGrad(X, G, geo, []int64{m, c, k, k})
			}
			if measured {
				b.Note("weight:" + form.Weight)
			}
			names = []string{"X", "G"}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := onnxio.Encode(st.Model(out))
	if err != nil {
		t.Fatal(err)
	}
	return data, names, st.Lowered()
}

// convWeightGradConvColsGemm takes the windows (im2col) of X from the
// one-hot grouped Conv of the batched form (convWeightGradCols), then, with
// both cols and dY transposed batch-innermost, one Gemm. Measured, not used
// (bench/RESULTS.md).
func convWeightGradConvColsGemm(b *builder, X, G *graph.Value, geo shapes.Geom, c, m int64) *graph.Value {
	K := graph.NumElements(geo.K)
	cols := b.convCols(X, geo, c)
	colsT := b.Reshape(b.Transpose(b.Reshape(cols, []int64{0, c * K, -1}), []int64{1, 0, 2}), []int64{c * K, -1})
	GT := b.Reshape(b.Transpose(b.Reshape(G, []int64{0, m, -1}), []int64{1, 0, 2}), []int64{m, -1})
	return b.Reshape(b.Op1("Gemm", []*graph.Value{GT, colsT}, aI("transB", 1)), slices.Concat([]int64{m, c}, geo.K))
}

// convWeightGradGemmChunked is the gemm form (convWeightGradGemm) over
// chunks of chunk images of the n in the batch: the windows of Xᵀ
// [C, S…, N] (convWindows' Slices with the chunk's range of N added), their Concat and one Gemm per chunk accumulating into the last
// (Gemm's C input), so that each chunk's im2col matrix is written and read
// while it is still in cache instead of the whole batch's. The batch must be
// a multiple of chunk (the benchmark's is). Measured, not used.
func convWeightGradGemmChunked(b *builder, X, G *graph.Value, geo shapes.Geom, n, c, m, o, chunk int64) *graph.Value {
	XT := b.Transpose(X, []int64{1, 2, 3, 0})
	GT := b.Reshape(b.Transpose(G, []int64{1, 2, 3, 0}), []int64{m, o * o, -1})
	src := XT
	if geo.PB[0] != 0 || geo.PE[0] != 0 {
		src = b.Op1("Pad", []*graph.Value{XT, b.I64(0, geo.PB[0], geo.PB[1], 0, 0, geo.PE[0], geo.PE[1], 0)})
	}
	var acc *graph.Value
	for n0 := int64(0); n0 < n; n0 += chunk {
		var us []*graph.Value
		for kh := int64(0); kh < geo.K[0]; kh++ {
			for kw := int64(0); kw < geo.K[1]; kw++ {
				st := []int64{kh * geo.D[0], kw * geo.D[1], n0}
				en := []int64{st[0] + geo.S[0]*(o-1) + 1, st[1] + geo.S[1]*(o-1) + 1, n0 + chunk}
				w := b.Op1("Slice", []*graph.Value{src, b.I64(st...), b.I64(en...), b.I64(1, 2, 3), b.I64(geo.S[0], geo.S[1], 1)})
				us = append(us, b.Unsqueeze(w, []int64{1}))
			}
		}
		cols := us[0]
		if len(us) > 1 {
			cols = b.Op1("Concat", us, aI("axis", 1))
		}
		cols = b.Reshape(cols, []int64{c * geo.K[0] * geo.K[1], -1})
		g := b.Reshape(b.Op1("Slice", []*graph.Value{GT, b.I64(n0), b.I64(n0 + chunk), b.I64(2)}), []int64{m, -1})
		in := []*graph.Value{g, cols}
		if acc != nil {
			in = append(in, acc)
		}
		acc = b.Op1("Gemm", in, aI("transB", 1))
	}
	return b.Reshape(acc, []int64{m, c, geo.K[0], geo.K[1]})
}

// convWeightGradTrickNCHWc is the convolution trick (lowering.ConvWeightTrick) on
// the NCHWc kernels, measured for nchwc.go's note and not used: Xᵀ
// [C, N, H, W] blocked over N, dYᵀ as the filter [M, N, O…] in OIHWBiBo, the
// result [C, M, k′…] reordered back. The batch must be a multiple of the
// block (the benchmark's is).
func convWeightGradTrickNCHWc(b *builder, sym func() int64, X, G *graph.Value, geo shapes.Geom, c, m, hw, o int64) *graph.Value {
	B := b.spec.NCHWcBlock
	const n = -1 // batch, from the data
	Xr := b.nchwc("ReorderInput", []*graph.Value{b.Transpose(X, []int64{1, 0, 2, 3})}, []int64{c, sym(), hw, hw})
	// ReorderInput of dY: [N/B, B(n), M/B, O, B(m)] → [N/B, M/B, O, B(n), B(m)] → [M/B, N/B, O, B(n), B(m)].
	Gr := b.nchwc("ReorderInput", []*graph.Value{G}, []int64{sym(), m, o, o})
	Gr = b.Transpose(b.Reshape(Gr, []int64{n, B, m / B, o * o, B}), []int64{0, 2, 3, 1, 4})
	Gr = b.Reshape(b.Transpose(Gr, []int64{1, 0, 2, 3, 4}), []int64{m, n, o, o})
	kp := (hw+geo.PB[0]+geo.PE[0]-geo.S[0]*(o-1)-1)/geo.D[0] + 1
	T := b.nchwc("Conv", []*graph.Value{Xr, Gr}, []int64{c, m, kp, kp}, aIs("kernel_shape", []int64{o, o}),
		aIs("strides", geo.D), aIs("dilations", geo.S), aIs("pads", slices.Concat(geo.PB, geo.PE)), aI("group", 1))
	T = b.nchwc("ReorderOutput", []*graph.Value{T}, []int64{c, m, kp, kp}, aI("channels", m))
	T = b.Transpose(T, []int64{1, 0, 2, 3})
	if kp != geo.K[0] {
		T = b.Op1("Slice", []*graph.Value{T, b.I64(0, 0), b.I64(geo.K...), b.I64(2, 3)})
	}
	return T
}
