package autodiff

import (
	"math"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// nchwcBlock is ONNX Runtime's NCHWc block size here; the test is skipped
// where the kernels are missing.
func nchwcBlock(t *testing.T) int64 {
	t.Helper()
	testutil.RequireORT(t)
	B := onnxrt.NCHWcBlockSize(onnxrt.Options{})
	if B == 0 {
		t.Skip("ONNX Runtime has no NCHWc kernels on this machine")
	}
	return B
}

// TestConvNCHWc checks Conv on the NCHWc kernels (forward, the flipped
// input gradient at stride 1 and the polyphase one at larger strides)
// against finite differences, and that the kernels are used
// exactly where they apply. Channel counts are multiples of 16 (and so of 8).
func TestConvNCHWc(t *testing.T) {
	B := nchwcBlock(t)
	for i, tc := range []struct {
		ruleCase
		forward, input bool // NCHWc forward Conv, NCHWc input gradient
	}{
		{ruleCase{name: "k3p1-bias", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 6, 6}, []int64{32, 16, 3, 3}, true, []int64{2, 32, 6, 6}, aIs("pads", []int64{1, 1, 1, 1}))}, true, true},
		// Strided: the polyphase input gradient (odd and even sizes, pads
		// asymmetric or none, one axis strided, a 5×5 kernel).
		{ruleCase{name: "stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 7, 6}, []int64{16, 16, 3, 3}, false, []int64{2, 16, 4, 3}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2}))}, true, true},
		{ruleCase{name: "stride2-asym-pads", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 8, 9}, []int64{32, 16, 3, 3}, true, []int64{2, 32, 4, 5}, aIs("pads", []int64{0, 1, 1, 1}), aIs("strides", []int64{2, 2}))}, true, true},
		{ruleCase{name: "stride2-nopad", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 9, 8}, []int64{16, 16, 3, 3}, false, []int64{2, 16, 4, 3}, aIs("strides", []int64{2, 2}))}, true, true},
		{ruleCase{name: "stride2x1", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 6, 5}, []int64{16, 16, 3, 3}, false, []int64{2, 16, 3, 5}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 1}))}, true, true},
		{ruleCase{name: "k5-stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 32, 9, 10}, []int64{16, 32, 5, 5}, false, []int64{1, 16, 5, 5}, aIs("pads", []int64{2, 2, 2, 2}), aIs("strides", []int64{2, 2}))}, true, true},
		// Strided where the polyphase form does not apply: dilation, a
		// kernel smaller than the stride (ConvTranspose).
		{ruleCase{name: "stride2-dilation2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 16, 9, 9}, []int64{16, 16, 3, 3}, false, []int64{1, 16, 3, 3}, aIs("strides", []int64{2, 2}), aIs("dilations", []int64{2, 2}))}, true, false},
		{ruleCase{name: "k2-stride3", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 16, 8, 8}, []int64{16, 16, 2, 2}, false, []int64{1, 16, 3, 3}, aIs("strides", []int64{3, 3}))}, true, false},
		{ruleCase{name: "asym-pads-dilation2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 16, 9, 8}, []int64{16, 16, 3, 2}, true, []int64{1, 16, 8, 8}, aIs("pads", []int64{2, 0, 1, 2}), aIs("dilations", []int64{2, 2}))}, true, true},
		{ruleCase{name: "same-upper-k4", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 16, 5, 5}, []int64{16, 16, 4, 4}, false, []int64{1, 16, 5, 5}, aS("auto_pad", "SAME_UPPER"))}, true, true},
		{ruleCase{name: "k1x3", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{3, 32, 3, 5}, []int64{16, 32, 1, 3}, true, []int64{3, 16, 3, 3})}, true, true},
		{ruleCase{name: "patchify", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 8, 8}, []int64{16, 16, 4, 4}, true, []int64{2, 16, 2, 2}, aIs("strides", []int64{4, 4}))}, true, true},
		// Not applicable: 1×1 kernels, channels not a multiple of the block,
		// groups, 1-D (float64 neither, but ONNX Runtime has no float64
		// Conv at all).
		{ruleCase{name: "1x1", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{3, 32, 3, 3}, []int64{16, 32, 1, 1}, true, []int64{3, 16, 3, 3})}, false, false},
		{ruleCase{name: "channels-12", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 5, 5}, []int64{12, 16, 3, 3}, true, []int64{2, 12, 5, 5}, aIs("pads", []int64{1, 1, 1, 1}))}, false, false},
		{ruleCase{name: "groups2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 32, 5, 5}, []int64{32, 16, 3, 3}, false, []int64{2, 32, 5, 5}, aI("group", 2), aIs("pads", []int64{1, 1, 1, 1}))}, false, false},
		{ruleCase{name: "1d", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 16, 9}, []int64{16, 16, 3}, true, []int64{2, 16, 9}, aIs("pads", []int64{1, 1}))}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFG(t, tc.dt, uint64(300+i))
			out, shape, params := tc.build(f)
			art := checkVJP(t, f, out, shape, params, Spec{Lowering: cpu.Lowering{NCHWcBlock: B}}, tc.eps, tc.tol)
			if got := slices.Contains(art.convForms, "forward:nchwc"); got != tc.forward {
				t.Errorf("NCHWc forward used: %v, want %v (%v)", got, tc.forward, art.convForms)
			}
			if got := slices.Contains(art.convForms, "input:nchwc"); got != tc.input {
				t.Errorf("NCHWc input gradient used: %v, want %v (%v)", got, tc.input, art.convForms)
			}
			if got, want := slices.Contains(art.convForms, "input:polyphase"), tc.input && !slices.Contains(art.convForms, "input:flipped"); got != want {
				t.Errorf("polyphase input gradient used: %v, want %v (%v)", got, want, art.convForms)
			}
			hasDomain := slices.ContainsFunc(art.Model.Opsets, func(o graph.OpsetImport) bool { return o.Domain == "com.microsoft.nchwc" })
			if hasDomain != tc.forward {
				t.Errorf("opset imports %v: nchwc domain %v, want %v", art.Model.Opsets, hasDomain, tc.forward)
			}
		})
	}
}

// TestConvNCHWcMatchesPlain runs a two-Conv chain with and without the
// NCHWc kernels on the same inputs: loss, output and every gradient agree to
// float32 rounding.
func TestConvNCHWcMatchesPlain(t *testing.T) {
	B := nchwcBlock(t)
	build := func() *graph.Model {
		f := newFG(t, s, 7)
		x := f.param("x", 4, 16, 10, 10)
		w1, b1 := f.param("w1", 32, 16, 3, 3), f.param("b1", 32)
		w2 := f.param("w2", 16, 32, 3, 3)
		h := f.op("Conv", []*graph.Value{x, w1, b1}, aIs("pads", []int64{1, 1, 1, 1}))
		h = f.op("Relu", []*graph.Value{h})
		y := f.op("Conv", []*graph.Value{h, w2}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2}))
		return f.model(y)
	}
	params := []string{"x", "w1", "b1", "w2"}
	run := func(block int64) map[string]*graph.Tensor {
		m := build()
		art := buildSeed(t, m, Spec{Params: params, Lowering: cpu.Lowering{NCHWcBlock: block}})
		r := newRunner(t, art)
		feeds := map[string]*graph.Tensor{}
		for _, v := range m.Graph.Initializers {
			feeds[v.Name] = v.Init
		}
		seed := graph.NewFloat32("seed", []int64{4, 16, 5, 5}, make([]float32, 4*16*5*5))
		sv, _ := seed.Float32s()
		for i := range sv {
			sv[i] = float32(math.Sin(float64(i)))
		}
		if err := seed.SetFloat32s(sv); err != nil {
			t.Fatal(err)
		}
		feeds["seed"] = seed
		return r.run(t, feeds)
	}
	plain, blocked := run(0), run(B)
	for name, want := range plain {
		got := blocked[name]
		if got == nil {
			t.Fatalf("output %q missing with NCHWc", name)
		}
		w, g := vals(t, want), vals(t, got)
		var maxAbs, maxDiff float64
		for i := range w {
			maxAbs = max(maxAbs, math.Abs(w[i]))
			maxDiff = max(maxDiff, math.Abs(g[i]-w[i]))
		}
		if maxDiff > 1e-5*max(maxAbs, 1) {
			t.Errorf("%s: max |Δ| %g (max |value| %g)", name, maxDiff, maxAbs)
		}
	}
}
