package autodiff

import (
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/train/lowering"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// conv builds Conv(x[xs], w[ws] (, b)) with attrs; linear in each parameter.
func convCase(op string, xs, ws []int64, bias bool, out []int64, attrs ...*graph.Attribute) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		x, w := f.param("x", xs...), f.param("w", ws...)
		ins := []*graph.Value{x, w}
		params := []string{"x", "w"}
		if bias {
			nb := ws[0]
			if op == "ConvTranspose" {
				nb = out[1]
			}
			ins = append(ins, f.param("b", nb))
			params = append(params, "b")
		}
		return f.op(op, ins, attrs...), out, params
	}
}

func poolCase(op string, xs, out []int64, attrs ...*graph.Attribute) func(f *fg) (*graph.Value, []int64, []string) {
	return func(f *fg) (*graph.Value, []int64, []string) {
		x := f.param("x", xs...)
		return f.op(op, []*graph.Value{x}, attrs...), out, []string{"x"}
	}
}

func bnCase(f *fg) (*graph.Value, []int64, []string) {
	x := f.param("x", 3, 4, 5, 5)
	g, b := f.param("gamma", 4), f.param("beta", 4)
	mean := f.param("mean", 4)
	v := f.randn(4)
	for i := range v {
		v[i] = 0.5 + v[i]*v[i]
	}
	vr := f.paramVals("var", []int64{4}, v)
	return f.op("BatchNormalization", []*graph.Value{x, g, b, mean, vr}, aF("epsilon", 1e-3)), []int64{3, 4, 5, 5}, []string{"x", "gamma", "beta"}
}

var nnCases = []ruleCase{
	{name: "Conv/k3p1", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 3, 6, 6}, []int64{4, 3, 3, 3}, true, []int64{2, 4, 6, 6}, aIs("pads", []int64{1, 1, 1, 1}))},
	{name: "Conv/stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 3, 7, 6}, []int64{4, 3, 3, 3}, false, []int64{2, 4, 4, 3}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2}))},
	{name: "Conv/asym-pads", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 2, 6, 5}, []int64{3, 2, 3, 2}, true, []int64{2, 3, 6, 5}, aIs("pads", []int64{0, 1, 2, 0}))},
	{name: "Conv/dilation2-stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 2, 9, 8}, []int64{3, 2, 3, 3}, false, []int64{2, 3, 3, 3}, aIs("dilations", []int64{2, 2}), aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 0, 0, 1}))},
	{name: "Conv/groups2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 4, 5, 5}, []int64{6, 2, 3, 3}, true, []int64{2, 6, 5, 5}, aI("group", 2), aIs("pads", []int64{1, 1, 1, 1}))},
	{name: "Conv/depthwise-stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 4, 6, 6}, []int64{4, 1, 3, 3}, false, []int64{2, 4, 3, 3}, aI("group", 4), aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2}))},
	{name: "Conv/same-upper", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 2, 5, 5}, []int64{3, 2, 4, 4}, false, []int64{1, 3, 3, 3}, aS("auto_pad", "SAME_UPPER"), aIs("strides", []int64{2, 2}))},
	{name: "Conv/1x1", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{3, 4, 3, 3}, []int64{5, 4, 1, 1}, true, []int64{3, 5, 3, 3})},
	{name: "Conv/patchify", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 1, 8, 8}, []int64{4, 1, 4, 4}, true, []int64{2, 4, 2, 2}, aIs("strides", []int64{4, 4}))},
	// One input channel: the gemm form's one-hot Conv windows.
	{name: "Conv/one-channel", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 1, 7, 6}, []int64{3, 1, 3, 2}, true, []int64{2, 3, 6, 6}, aIs("pads", []int64{1, 0, 2, 1}), aIs("dilations", []int64{2, 1}))},
	{name: "Conv/one-channel-1d-stride2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 1, 9}, []int64{4, 1, 3}, false, []int64{2, 4, 5}, aIs("pads", []int64{1, 1}), aIs("strides", []int64{2}))},
	{name: "Conv/1d-dilation2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 3, 9}, []int64{4, 3, 3}, true, []int64{2, 4, 8}, aIs("pads", []int64{1, 2}), aIs("dilations", []int64{2}))},
	{name: "Conv/3d-stride", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 2, 4, 5, 3}, []int64{3, 2, 2, 3, 1}, false, []int64{2, 3, 4, 2, 3}, aIs("strides", []int64{1, 2, 1}), aIs("pads", []int64{0, 1, 0, 1, 0, 0}))},
	{name: "Conv/groups2-stride2-dilation2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 4, 9, 9}, []int64{6, 2, 3, 3}, true, []int64{2, 6, 4, 4}, aI("group", 2), aIs("strides", []int64{2, 2}), aIs("dilations", []int64{2, 2}), aIs("pads", []int64{2, 1, 0, 2}))},
	{name: "Conv/pad-beyond-kernel", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{1, 2, 5, 5}, []int64{3, 2, 3, 3}, false, []int64{1, 3, 9, 9}, aIs("pads", []int64{3, 3, 3, 3}))},
	// Two of the three kernel offsets meet only padding (the valid weight
	// form falls back to gemm), a 1-D output of one position.
	{name: "Conv/offsets-in-padding", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 2, 1}, []int64{3, 2, 3}, true, []int64{2, 3, 1}, aIs("pads", []int64{2, 0}))},
	// 4×4 with a 3×3 kernel: where the valid weight form is chosen.
	{name: "Conv/4x4-p1-s2", dt: s, eps: linEps, tol: linTol, build: convCase("Conv", []int64{2, 3, 7, 7}, []int64{4, 3, 3, 3}, false, []int64{2, 4, 4, 4}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2}))},
	{name: "ConvTranspose/dilation2", dt: s, eps: linEps, tol: linTol, build: convCase("ConvTranspose", []int64{2, 3, 4, 4}, []int64{3, 2, 3, 3}, true, []int64{2, 2, 11, 11}, aIs("strides", []int64{2, 2}), aIs("dilations", []int64{2, 2}), aIs("pads", []int64{1, 0, 0, 1}), aIs("output_padding", []int64{1, 1}))},
	{name: "ConvTranspose/stride2", dt: s, eps: linEps, tol: linTol, build: convCase("ConvTranspose", []int64{2, 3, 4, 4}, []int64{3, 2, 3, 3}, true, []int64{2, 2, 8, 8}, aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 1, 1, 1}), aIs("output_padding", []int64{1, 1}))},
	{name: "ConvTranspose/groups", dt: s, eps: linEps, tol: linTol, build: convCase("ConvTranspose", []int64{2, 4, 3, 3}, []int64{4, 3, 2, 2}, false, []int64{2, 6, 4, 4}, aI("group", 2))},
	{name: "MaxPool/k3s2p1-overlap", dt: d, build: poolCase("MaxPool", []int64{2, 3, 7, 7}, []int64{2, 3, 4, 4}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 1, 1, 1}))},
	{name: "MaxPool/ceil", dt: d, build: poolCase("MaxPool", []int64{2, 2, 6, 6}, []int64{2, 2, 3, 3}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aI("ceil_mode", 1))},
	{name: "MaxPool/k2s1", dt: d, build: poolCase("MaxPool", []int64{1, 2, 5, 4}, []int64{1, 2, 4, 3}, aIs("kernel_shape", []int64{2, 2}))},
	{name: "AveragePool/k2", dt: s, eps: linEps, tol: linTol, build: poolCase("AveragePool", []int64{2, 3, 7, 6}, []int64{2, 3, 3, 3}, aIs("kernel_shape", []int64{2, 2}), aIs("strides", []int64{2, 2}))},
	{name: "AveragePool/pad-exclude", dt: s, eps: linEps, tol: linTol, build: poolCase("AveragePool", []int64{2, 2, 7, 7}, []int64{2, 2, 4, 4}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 1, 1, 1}))},
	{name: "AveragePool/pad-include", dt: s, eps: linEps, tol: linTol, build: poolCase("AveragePool", []int64{2, 2, 7, 7}, []int64{2, 2, 4, 4}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 1, 1, 1}), aI("count_include_pad", 1))},
	{name: "AveragePool/ceil", dt: s, eps: linEps, tol: linTol, build: poolCase("AveragePool", []int64{1, 2, 6, 6}, []int64{1, 2, 3, 3}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aI("ceil_mode", 1))},
	{name: "AveragePool/ceil-pad-include", dt: s, eps: linEps, tol: linTol, build: poolCase("AveragePool", []int64{1, 2, 6, 6}, []int64{1, 2, 4, 4}, aIs("kernel_shape", []int64{3, 3}), aIs("strides", []int64{2, 2}), aIs("pads", []int64{1, 1, 1, 1}), aI("ceil_mode", 1), aI("count_include_pad", 1))},
	{name: "GlobalAveragePool", dt: s, eps: linEps, tol: linTol, build: poolCase("GlobalAveragePool", []int64{2, 3, 4, 5}, []int64{2, 3, 1, 1})},
	{name: "BatchNormalization/inference", dt: d, build: bnCase},
	{name: "BatchNormalization/training", dt: d, bn: BNTraining, build: bnCase},
	{name: "LayerNormalization/last", dt: s, eps: f32eps, tol: f32tol, build: func(f *fg) (*graph.Value, []int64, []string) {
		x, g, b := f.param("x", 2, 3, 6), f.param("gamma", 6), f.param("beta", 6)
		return f.op("LayerNormalization", []*graph.Value{x, g, b}, aI("axis", -1), aF("epsilon", 1e-5)), []int64{2, 3, 6}, []string{"x", "gamma", "beta"}
	}},
	{name: "LayerNormalization/axis1", dt: s, eps: f32eps, tol: f32tol, build: func(f *fg) (*graph.Value, []int64, []string) {
		x, g, b := f.param("x", 2, 3, 4), f.param("gamma", 3, 4), f.param("beta", 4)
		return f.op("LayerNormalization", []*graph.Value{x, g, b}, aI("axis", 1)), []int64{2, 3, 4}, []string{"x", "gamma", "beta"}
	}},
	{name: "Gelu/none", dt: s, opset: 20, eps: f32eps, tol: f32tol, build: unary("Gelu")},
	{name: "Gelu/tanh", dt: s, opset: 20, eps: f32eps, tol: f32tol, build: unary("Gelu", aS("approximate", "tanh"))},
}

func TestRulesNN(t *testing.T) { runCases(t, nnCases) }

// TestConvFoldsBatchNormScale: Conv (with bias) → BatchNormalization, where
// the Conv's backward takes BatchNormalization's per-channel factor γ/σ into
// its filter (foldChannelScale) instead of a Mul over the activation: the
// gradients of x, w, b, γ and β against finite differences, in both modes;
// with a filter larger than twice the activation the Mul stays. On a plane
// of cpu.DepthwiseMinPlane or more, the CPU lowering makes training mode's
// affine maps depthwise 1×1 Convs; Plain keeps BatchNormalization kernels.
func TestConvFoldsBatchNormScale(t *testing.T) {
	for _, c := range []struct {
		name string
		c    int64 // input channels (4 output channels, batch 2): on 6×6, 3 folds
		// (2·|W| = 216 < |dY| = 288), 5 does not (360)
		hw       int64 // spatial size
		bn       BNMode
		fold, dw bool
	}{
		{"inference", 3, 6, BNInference, true, false},
		{"training", 3, 6, BNTraining, true, false},
		{"training/large-filter", 5, 6, BNTraining, false, false},
		{"training/depthwise", 3, 24, BNTraining, true, true},
		{"training/plain", 3, 24, BNTraining, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFG(t, s, 7)
			const m = 4
			x, w, bias := f.param("x", 2, c.c, c.hw, c.hw), f.param("w", m, c.c, 3, 3), f.param("b", m)
			y := f.op("Conv", []*graph.Value{x, w, bias}, aIs("pads", []int64{1, 1, 1, 1}))
			g, be, mean := f.param("gamma", m), f.param("beta", m), f.param("mean", m)
			v := f.randn(m)
			for i := range v {
				v[i] = 0.5 + v[i]*v[i]
			}
			z := f.op("BatchNormalization", []*graph.Value{y, g, be, mean, f.paramVals("var", []int64{m}, v)}, aF("epsilon", 1e-3))
			params := []string{"x", "w", "b", "gamma", "beta"}
			if c.bn == BNTraining {
				params = []string{"x", "w", "gamma", "beta"} // the bias cancels in batch statistics
			}
			spec := Spec{BN: c.bn}
			if strings.HasSuffix(c.name, "/plain") {
				spec.Lowering = lowering.Plain{}
			}
			art := checkVJP(t, f, z, []int64{2, m, c.hw, c.hw}, params, spec, f32eps, f32tol)
			if got := slices.Contains(art.convForms, "scale:folded"); got != c.fold {
				t.Errorf("scale folded into the Conv: %v, want %v (forms %v)", got, c.fold, art.convForms)
			}
			dw := 0
			for _, n := range art.Model.Graph.Nodes() {
				if n.OpType == "Conv" && n.AttrInt("group", 1) == m {
					dw++
				}
			}
			if want := map[bool]int{false: 0, true: 2}[c.dw]; dw != want {
				t.Errorf("%d depthwise affine Convs, want %d", dw, want)
			}
		})
	}
}

// TestBatchNormMultithreaded checks BatchNormalization's CPU lowering for
// many threads (Spec.Threads ≥ cpu.MulAddThreads: per-channel Mul and Add
// instead of BatchNormalization kernels) against finite differences, in
// both modes, and that Plain keeps the kernels there.
func TestBatchNormMultithreaded(t *testing.T) {
	for i, tc := range nnCases {
		if !strings.HasPrefix(tc.name, "BatchNormalization/") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			f := newFG(t, tc.dt, uint64(100+i))
			out, shape, params := tc.build(f)
			for _, lw := range []lowering.Lowering{cpu.Lowering{}, lowering.Plain{}} {
				art := checkVJP(t, f, out, shape, params, Spec{BN: tc.bn, Threads: cpu.MulAddThreads, Lowering: lw}, f64eps, f64tol)
				n := 0
				for _, nd := range art.Model.Graph.Nodes() {
					if nd.OpType == "BatchNormalization" {
						n++
					}
				}
				want := map[BNMode]int{BNInference: 1, BNTraining: 0}[tc.bn]
				if _, plain := lw.(lowering.Plain); plain && tc.bn == BNTraining {
					want = 2 // the forward's and the backward's kernels
				}
				if n != want {
					t.Errorf("%T: %d BatchNormalization nodes in the training graph, want %d", lw, n, want)
				}
			}
		})
	}
}
