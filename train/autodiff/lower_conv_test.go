package autodiff

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/graph/shapes"
	"github.com/unlearn-tool/unlearn/train/lowering"
	"github.com/unlearn-tool/unlearn/train/lowering/cpu"
)

// convForms lists every forced combination of Conv gradient formulations.
var convForms = func() []cpu.Lowering {
	var out []cpu.Lowering
	for _, in := range []string{cpu.ConvInputTranspose, cpu.ConvInputFlipped} {
		for _, w := range []string{cpu.ConvWeightTrick, cpu.ConvWeightGemm, cpu.ConvWeightBatched, cpu.ConvWeightValid} {
			out = append(out, cpu.Lowering{Input: in, Weight: w})
		}
	}
	return out
}()

// flippedApplies names the Conv cases of nnCases where the flipped-kernel
// input gradient applies (stride 1, pads ≤ d(k−1)).
var flippedApplies = map[string]bool{
	"Conv/k3p1": true, "Conv/asym-pads": true, "Conv/groups2": true, "Conv/1x1": true,
	"Conv/1d-dilation2": true, "Conv/one-channel": true, "Conv/offsets-in-padding": true,
}

// TestConvForms checks every Conv and ConvTranspose case of nnCases with
// every formulation of the Conv gradients against finite differences, and
// that the forced form is the one used where it applies.
func TestConvForms(t *testing.T) {
	for i, tc := range nnCases {
		if !strings.HasPrefix(tc.name, "Conv") {
			continue
		}
		for _, form := range convForms {
			t.Run(tc.name+"/"+form.Input+"+"+form.Weight, func(t *testing.T) {
				f := newFG(t, tc.dt, uint64(100+i))
				out, shape, params := tc.build(f)
				art := checkVJP(t, f, out, shape, params, Spec{Lowering: form}, tc.eps, tc.tol)
				wantW := form.Weight
				if wantW == cpu.ConvWeightValid && (strings.Contains(tc.name, "group") || strings.Contains(tc.name, "depthwise") ||
					tc.name == "Conv/offsets-in-padding") {
					wantW = cpu.ConvWeightGemm // the valid form is for group 1 and offsets that meet X
				}
				if !slices.Contains(art.convForms, "weight:"+wantW) {
					t.Errorf("weight form %s not used: %v", wantW, art.convForms)
				}
				if strings.HasPrefix(tc.name, "Conv/") {
					want := form.Input
					if !flippedApplies[tc.name] {
						want = cpu.ConvInputTranspose
					}
					if !slices.Contains(art.convForms, "input:"+want) {
						t.Errorf("input form %s not used: %v", want, art.convForms)
					}
				}
			})
		}
	}
}

// TestPlainLowering checks the Conv and ConvTranspose cases of nnCases
// built with lowering.Plain (what Build takes when its Spec names no
// Lowering, and train.EngineSpec on cuda) against finite differences, and
// that the graph holds only its forms: the model's Conv forward, dX as a
// ConvTranspose, dW by the trick.
func TestPlainLowering(t *testing.T) {
	for i, tc := range nnCases {
		if !strings.HasPrefix(tc.name, "Conv") {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			f := newFG(t, tc.dt, uint64(100+i))
			out, shape, params := tc.build(f)
			art := checkVJP(t, f, out, shape, params, Spec{Lowering: lowering.Plain{}}, tc.eps, tc.tol)
			for _, form := range art.Lowered() {
				switch form {
				case "input:convtranspose", "weight:trick", "scale:folded":
				default:
					t.Errorf("plain lowering used form %q (%v)", form, art.Lowered())
				}
			}
			if strings.HasPrefix(tc.name, "Conv/") && !slices.Contains(art.Lowered(), "weight:trick") {
				t.Errorf("no trick weight gradient: %v", art.Lowered())
			}
		})
	}
}

// TestLoweringChecked: a Lowering with an unknown form is refused before
// the build, naming the form.
func TestLoweringChecked(t *testing.T) {
	f := newFG(t, graph.Float, 1)
	out := f.op("Relu", []*graph.Value{f.param("w", 2, 3)})
	for _, l := range []cpu.Lowering{{Input: "nosuch"}, {Weight: "nosuch"}, {Forward: "nosuch"}} {
		if _, err := Build(f.model(out), Spec{Lowering: l}); !errors.Is(err, ErrModel) || !strings.Contains(err.Error(), `"nosuch"`) {
			t.Errorf("%+v: %v", l, err)
		}
	}
}

// recordingLowering is a Lowering written as an outside package would
// write one, from lowering's exported API only: it emits the forward Conv
// itself (a Conv with explicit attributes, named as the model's output)
// and takes the portable forms for the gradients, recording each call.
type recordingLowering struct{ calls *[]string }

func (r recordingLowering) ConvForward(e lowering.Emitter, X, W, B *graph.Value, geo shapes.Geom, out string) *graph.Value {
	*r.calls = append(*r.calls, "forward")
	ins := []*graph.Value{X, W}
	if B != nil {
		ins = append(ins, B)
	}
	return e.Named("Conv", ins, out, graph.IntsAttr("kernel_shape", geo.K), graph.IntsAttr("strides", geo.S),
		graph.IntsAttr("dilations", geo.D), graph.IntsAttr("pads", slices.Concat(geo.PB, geo.PE)), graph.IntAttr("group", geo.Group))
}

func (r recordingLowering) ConvInputGrad(e lowering.Emitter, G, W *graph.Value, geo shapes.Geom, xs []int64) *graph.Value {
	*r.calls = append(*r.calls, "input")
	return lowering.ConvInputTranspose(e, G, W, geo, xs)
}

func (r recordingLowering) ConvWeightGrad(e lowering.Emitter, X, G *graph.Value, geo shapes.Geom, ws []int64) *graph.Value {
	*r.calls = append(*r.calls, "weight")
	return lowering.ConvWeightTrick(e, X, G, geo, ws)
}

// TestOutsideLowering: a Lowering from outside the package is called for
// the forward Conv, dX and dW, its forward takes the model's output name,
// and the gradients through its nodes pass the finite-difference check.
func TestOutsideLowering(t *testing.T) {
	tc := nnCases[0] // Conv/k3p1 with bias
	var calls []string
	f := newFG(t, tc.dt, 7)
	out, shape, params := tc.build(f)
	art := checkVJP(t, f, out, shape, params, Spec{Lowering: recordingLowering{&calls}}, tc.eps, tc.tol)
	if !slices.Contains(calls, "forward") || !slices.Contains(calls, "weight") {
		t.Errorf("calls %v: want the forward and the weight gradient", calls)
	}
	var convs int
	for _, n := range art.Model.Graph.Nodes() {
		if n.OpType == "Conv" && n.Output(0).Name == out.Name {
			convs++
		}
	}
	if convs != 1 {
		t.Errorf("%d Conv nodes output the model's %q, want the lowering's one", convs, out.Name)
	}
}
