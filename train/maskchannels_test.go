package train

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// channelMask selects a random share of all output channels of m (seeded;
// drawn over the model's neurons as a whole, not per layer): every element
// of a chosen channel (weight slice, bias, normalization scale and shift).
func channelMask(t *testing.T, m *graph.Model, share float64, seed uint64) (*graph.NeuronMap, map[string][]bool) {
	t.Helper()
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	mask := map[string][]bool{}
	for _, n := range nm.Neurons {
		if rng.Float64() >= share {
			continue
		}
		for _, s := range nm.ElementsOf(n.Layer, n.Index) {
			mk := mask[s.Param.Name]
			if mk == nil {
				mk = make([]bool, s.Param.Init.Len())
				mask[s.Param.Name] = mk
			}
			for _, i := range s.Flat {
				mk[i] = true
			}
		}
	}
	return nm, mask
}

// TestEngineGradChannels: with a random 10 % channel mask on the bundled
// ResNet, an engine whose graph computes the weight gradients of the
// selected output channels only (Spec.GradChannels) gives, in Param.Grad,
// the whole gradient's values on those channels and zero elsewhere; one
// masked SGD step (momentum, weight decay) then moves the parameters as
// from the whole gradient. Tolerance: 1e-5 relative to the tensor's
// largest gradient (the product over fewer output channels may be blocked
// differently by MLAS, so the sums can round differently; measured 0 or a
// few 1e-7).
func TestEngineGradChannels(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	nm, mask := channelMask(t, m, 0.1, 31)
	sel := MaskChannels(nm, mask)
	if len(sel) == 0 {
		t.Fatal("no weight has some but not all of its channels selected")
	}
	var names []string
	for _, p := range nm.Params {
		if mask[p.Value.Name] != nil {
			names = append(names, p.Value.Name)
		}
	}
	base := autodiff.Spec{BN: autodiff.BNTraining, Params: names}
	whole := newEngine(t, m, base)
	spec := base
	spec.GradChannels = sel
	part := newEngine(t, m, spec)
	if got, want := len(part.Artifacts().GradChannels), len(sel); got != want {
		t.Errorf("%d restricted gradients, %d asked for", got, want)
	}
	if whole.Artifacts().GradChannels != nil {
		t.Error("the unrestricted engine has restricted gradients")
	}
	b := refBatch(t)
	worstGrad, worstParam := 0.0, 0.0
	opts := []*SGD{{Momentum: 0.9, WeightDecay: 5e-4}, {Momentum: 0.9, WeightDecay: 5e-4}}
	for step := range 2 {
		rw, err := whole.Step(b)
		if err != nil {
			t.Fatal(err)
		}
		rp, err := part.Step(b)
		if err != nil {
			t.Fatal(err)
		}
		if step == 0 && rw.Loss != rp.Loss {
			t.Errorf("loss %v, restricted %v", rw.Loss, rp.Loss)
		}
		for i, pw := range whole.Params() {
			pp := part.Params()[i]
			if pp.Name != pw.Name {
				t.Fatalf("parameter %d: %s vs %s", i, pp.Name, pw.Name)
			}
			cg, restricted := part.Artifacts().GradChannels[pw.Name]
			in := map[int]bool{}
			if restricted {
				l, _ := nm.LayerOf(m.Graph.LocalValue(pw.Name))
				for _, c := range cg.Channels {
					for _, k := range l.Members[0].Indices(int(c)) {
						in[k] = true
					}
				}
			}
			scale, worst := 0.0, 0.0
			for k, g := range pw.Grad {
				scale = max(scale, math.Abs(float64(g)))
				if restricted && !in[k] {
					if pp.Grad[k] != 0 {
						t.Fatalf("%s[%d]: %v outside the selected channels", pw.Name, k, pp.Grad[k])
					}
					continue
				}
				worst = max(worst, math.Abs(float64(pp.Grad[k]-g)))
			}
			worstGrad = max(worstGrad, worst/scale)
			if worst > 1e-5*scale {
				t.Errorf("step %d, %s (restricted %v): max |Δgrad| %.3g, scale %.3g", step, pw.Name, restricted, worst, scale)
			}
			pw.Mask, pp.Mask = mask[pw.Name], mask[pw.Name]
		}
		for _, pair := range []struct {
			e *Engine
			o *SGD
		}{{whole, opts[0]}, {part, opts[1]}} {
			if err := pair.o.Step(pair.e.Params(), 0.05); err != nil {
				t.Fatal(err)
			}
		}
		for i, pw := range whole.Params() {
			pp := part.Params()[i]
			worst, scale := 0.0, 0.0
			for k := range pw.Data {
				scale = max(scale, math.Abs(float64(pw.Data[k])))
				worst = max(worst, math.Abs(float64(pp.Data[k]-pw.Data[k])))
			}
			worstParam = max(worstParam, worst/scale)
			if worst > 1e-5*scale {
				t.Errorf("step %d, %s: parameters differ by %.3g (scale %.3g)", step, pw.Name, worst, scale)
			}
		}
	}
	t.Logf("%d of %d parameters restricted; max relative difference: gradients %.3g, parameters %.3g",
		len(sel), len(names), worstGrad, worstParam)
}
