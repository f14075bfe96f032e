package autodiff

import (
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// TestGradChannels: a weight gradient restricted to some output channels
// (Spec.GradChannels) equals those channels' slices of the whole gradient,
// for every Conv weight-gradient form, a Conv whose BatchNormalization
// factor is folded in, Gemm (transB 0 and 1) and a 2-D MatMul; the whole
// gradient itself is checked against finite differences by the rule tests.
// Both graphs run on one session each, on the same inputs and seed.
func TestGradChannels(t *testing.T) {
	type built struct {
		out   *graph.Value
		shape []int64
	}
	conv := func(f *fg) built {
		x, w := f.param("x", 2, 8, 6, 6), f.param("w", 6, 8, 3, 3)
		return built{f.op("Conv", []*graph.Value{x, w, f.param("b", 6)}, aIs("pads", []int64{1, 1, 1, 1})), []int64{2, 6, 6, 6}}
	}
	for _, c := range []struct {
		name  string
		form  string // Spec.ConvGrad.Weight
		bn    BNMode
		build func(f *fg) built
		sel   []int64
		axis  int
		forms []string // expected among art.convForms of the restricted build
	}{
		{name: "conv/gemm", form: cpu.ConvWeightGemm, build: conv, sel: []int64{1, 4}, forms: []string{"weight:gemm"}},
		{name: "conv/bmm", form: cpu.ConvWeightBatched, build: conv, sel: []int64{0, 2, 5}, forms: []string{"weight:bmm"}},
		{name: "conv/valid", form: cpu.ConvWeightValid, build: conv, sel: []int64{3}, forms: []string{"weight:valid"}},
		{name: "conv/trick", form: cpu.ConvWeightTrick, build: conv, sel: []int64{0, 5}, forms: []string{"weight:trick"}},
		{name: "conv/winograd", form: cpu.ConvWinograd, build: conv, sel: []int64{2, 3}, forms: []string{"weight:winograd"}},
		{name: "conv/stride2", build: func(f *fg) built {
			x, w := f.param("x", 2, 4, 8, 8), f.param("w", 6, 4, 3, 3)
			return built{f.op("Conv", []*graph.Value{x, w}, aIs("pads", []int64{1, 1, 1, 1}), aIs("strides", []int64{2, 2})), []int64{2, 6, 4, 4}}
		}, sel: []int64{1, 2, 4}},
		{name: "conv+bn/folded", bn: BNTraining, build: func(f *fg) built {
			x, w := f.param("x", 2, 3, 6, 6), f.param("w", 4, 3, 3, 3)
			y := f.op("Conv", []*graph.Value{x, w}, aIs("pads", []int64{1, 1, 1, 1}))
			z := f.op("BatchNormalization", []*graph.Value{y, f.param("gamma", 4), f.param("beta", 4), f.param("mean", 4), f.paramVals("var", []int64{4}, []float64{1, 2, 3, 4})})
			return built{z, []int64{2, 4, 6, 6}}
		}, sel: []int64{0, 3}, forms: []string{"scale:folded"}},
		{name: "gemm/transB", build: func(f *fg) built {
			a, w := f.param("x", 5, 7), f.param("w", 6, 7)
			return built{f.op("Gemm", []*graph.Value{a, w, f.param("b", 6)}, aI("transB", 1), aF("alpha", 0.5)), []int64{5, 6}}
		}, sel: []int64{1, 2, 5}},
		{name: "gemm/noTransB", build: func(f *fg) built {
			a, w := f.param("x", 5, 7), f.param("w", 7, 6)
			return built{f.op("Gemm", []*graph.Value{a, w}), []int64{5, 6}}
		}, sel: []int64{0, 4}, axis: 1},
		{name: "matmul/3d", build: func(f *fg) built {
			a, w := f.param("x", 2, 3, 7), f.param("w", 7, 6)
			return built{f.op("MatMul", []*graph.Value{a, w}), []int64{2, 3, 6}}
		}, sel: []int64{2, 3, 5}, axis: 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFG(t, s, 11)
			bt := c.build(f)
			m := f.model(bt.out)
			params := []string{"x", "w"}
			spec := Spec{Params: params, BN: c.bn, Lowering: cpu.Lowering{Weight: c.form}}
			full := buildSeed(t, m, spec)
			spec.GradChannels = map[string][]int64{"w": c.sel}
			part := buildSeed(t, m, spec)
			cg, ok := part.GradChannels["w"]
			if !ok || cg.Axis != c.axis || !slices.Equal(cg.Channels, c.sel) {
				t.Fatalf("GradChannels %+v; want w on axis %d, channels %v", part.GradChannels, c.axis, c.sel)
			}
			if len(full.GradChannels) != 0 {
				t.Fatalf("the unrestricted build has GradChannels %+v", full.GradChannels)
			}
			for _, want := range c.forms {
				if !slices.Contains(part.convForms, want) {
					t.Errorf("forms %v lack %q", part.convForms, want)
				}
			}
			feeds := map[string]*graph.Tensor{"seed": floatTensor(s, bt.shape, f.randn(graph.NumElements(bt.shape)))}
			for _, p := range params {
				feeds[p] = f.g.LocalValue(p).Init
			}
			for _, io := range full.Inputs {
				if io.Role == "state" {
					feeds[io.Name] = f.g.LocalValue(io.Name).Init
				}
			}
			fo := newRunner(t, full).run(t, feeds)
			po := newRunner(t, part).run(t, feeds)
			wshape := f.g.LocalValue("w").Init.Shape
			gw, pw := vals(t, fo["grad/w"]), vals(t, po["grad/w"])
			ps := po["grad/w"].Shape
			if want := slices.Clone(wshape); true {
				want[c.axis] = int64(len(c.sel))
				if !slices.Equal(ps, want) {
					t.Fatalf("restricted gradient shape %v, want %v", ps, want)
				}
			}
			// The whole gradient's slices at the selected channels.
			outer, inner := graph.NumElements(wshape[:c.axis]), graph.NumElements(wshape[c.axis+1:])
			C, k := wshape[c.axis], int64(len(c.sel))
			worst, scale := 0.0, 0.0
			for o := range outer {
				for j, ch := range c.sel {
					for i := range inner {
						want := gw[(o*C+ch)*inner+i]
						got := pw[(o*k+int64(j))*inner+i]
						worst = max(worst, math.Abs(got-want))
						scale = max(scale, math.Abs(want))
					}
				}
			}
			if scale == 0 || worst > 1e-5*scale {
				t.Errorf("max |restricted − whole| = %.3g, scale %.3g", worst, scale)
			} else {
				t.Logf("max |restricted − whole| = %.3g (scale %.3g)", worst, scale)
			}
			// The other gradients are untouched.
			if gx, px := vals(t, fo["grad/x"]), vals(t, po["grad/x"]); !slices.Equal(gx, px) {
				t.Error("grad/x differs between the builds")
			}
		})
	}
}

// TestGradChannelsFallback: where the restriction cannot apply (a grouped
// Conv, every channel selected, a weight used twice) the gradient stays
// whole and the graph is the one built without it; a bad selection fails.
func TestGradChannelsFallback(t *testing.T) {
	f := newFG(t, s, 3)
	x, w := f.param("x", 2, 4, 5, 5), f.param("w", 4, 2, 3, 3)
	y := f.op("Conv", []*graph.Value{x, w}, aI("group", 2))
	m := f.model(y)
	for _, sel := range [][]int64{{1}, {0, 1, 2, 3}} {
		art := buildSeed(t, m, Spec{Params: []string{"w"}, GradChannels: map[string][]int64{"w": sel}})
		if art.GradChannels != nil {
			t.Errorf("selection %v: GradChannels %+v on a grouped Conv", sel, art.GradChannels)
		}
	}
	f2 := newFG(t, s, 3)
	a, b := f2.param("x", 3, 4), f2.param("w", 4, 4)
	h := f2.op("MatMul", []*graph.Value{a, b})
	m2 := f2.model(f2.op("MatMul", []*graph.Value{h, b}))
	if art := buildSeed(t, m2, Spec{Params: []string{"w"}, GradChannels: map[string][]int64{"w": {1}}}); art.GradChannels != nil {
		t.Errorf("a weight used twice: GradChannels %+v", art.GradChannels)
	}
	for _, sel := range [][]int64{{2, 1}, {4}, {-1}, {1, 1}} {
		f3 := newFG(t, s, 3)
		a, b := f3.param("x", 3, 4), f3.param("w", 4, 4)
		m3 := f3.model(f3.op("MatMul", []*graph.Value{a, b}))
		if _, err := Build(m3, Spec{Params: []string{"w"}, GradChannels: map[string][]int64{"w": sel}}); !errors.Is(err, ErrModel) {
			t.Errorf("selection %v: %v, want ErrModel", sel, err)
		}
	}
	if _, err := Build(m, Spec{GradChannels: map[string][]int64{"nosuch": {0}}}); !errors.Is(err, ErrModel) {
		t.Errorf("an unknown name: %v, want ErrModel", err)
	}
}
