package train

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// fan_in as PyTorch computes it for the bundled models' layers (the PyTorch
// modules are in testdata/make_testdata.py).
func TestFanIn(t *testing.T) {
	cases := []struct {
		model, layer string
		fan          int
	}{
		{"resnet_small_train.onnx", "conv1.weight", 1 * 3 * 3},
		{"resnet_small_train.onnx", "layer3.conv2.weight", 64 * 3 * 3},
		{"resnet_small_train.onnx", "fc.weight", 64},
		{"vit_small.onnx", "patch.weight", 1 * 7 * 7},
		{"vit_small.onnx", "head.weight", 64},
		// MatMul weights in PyTorch's layout [out, in] behind a Transpose …
		{"vit_small.onnx", "blocks.0.attn.in_proj_weight", 64},
		{"vit_small.onnx", "blocks.0.fc2.weight", 128},
		// … and pre-transposed to [in, out] by the eval export.
		{"vit_small_op13.onnx", "onnx::MatMul_329", 64},
		{"vit_small_op13.onnx", "onnx::MatMul_331", 128},
	}
	for _, c := range cases {
		m := loadModel(t, c.model)
		nm, err := graph.Neurons(m.Graph)
		if err != nil {
			t.Fatal(err)
		}
		l := nm.Layer(c.layer)
		if l == nil {
			t.Fatalf("%s: no layer %s", c.model, c.layer)
		}
		if got := FanIn(l); got != c.fan {
			t.Errorf("%s %s: fan_in %d, want %d", c.model, c.layer, got, c.fan)
		}
	}
}

// ResetNeurons draws U(−1/√fan_in, 1/√fan_in) for weights and biases, 1 and
// 0 for normalization scale and shift, and touches nothing outside the mask.
func TestResetNeurons(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string][]float32{}
	mask := map[string][]bool{}
	orig := map[string][]float32{}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, p := range nm.Params {
		v, _ := p.Value.Init.Float32s()
		params[p.Value.Name] = append([]float32{}, v...)
		orig[p.Value.Name] = v
		mk := make([]bool, len(v))
		for i := range mk {
			mk[i] = rng.IntN(3) == 0
		}
		mask[p.Value.Name] = mk
	}
	n, err := ResetNeurons(nm, params, mask, rand.New(rand.NewPCG(1, 1)))
	if err != nil || n == 0 {
		t.Fatal(n, err)
	}
	for _, l := range nm.Layers {
		b := 1 / math.Sqrt(float64(FanIn(l)))
		for _, mb := range l.Members {
			name := mb.Param.Name
			var sum2 float64
			cnt := 0
			for i, on := range mask[name] {
				v := params[name][i]
				if !on {
					if math.Float32bits(v) != math.Float32bits(orig[name][i]) {
						t.Fatalf("%s[%d] outside the mask changed", name, i)
					}
					continue
				}
				switch mb.Role {
				case graph.KindWeight, graph.KindBias:
					if math.Abs(float64(v)) > b {
						t.Fatalf("%s[%d] = %g outside ±%g", name, i, v, b)
					}
					sum2 += float64(v) * float64(v)
					cnt++
				case graph.KindNormScale:
					if v != 1 {
						t.Fatalf("%s[%d] = %g, want 1", name, i, v)
					}
				case graph.KindNormBias:
					if v != 0 {
						t.Fatalf("%s[%d] = %g, want 0", name, i, v)
					}
				}
			}
			// U(−b, b) has standard deviation b/√3.
			if cnt > 3000 {
				if sd := math.Sqrt(sum2 / float64(cnt)); math.Abs(sd-b/math.Sqrt(3)) > 0.05*b {
					t.Errorf("%s: sd %.4g, want %.4g", name, sd, b/math.Sqrt(3))
				}
			}
		}
	}
	// Same seed, same values.
	again := map[string][]float32{}
	for k, v := range orig {
		again[k] = append([]float32{}, v...)
	}
	ResetNeurons(nm, again, mask, rand.New(rand.NewPCG(1, 1)))
	for k := range params {
		for i := range params[k] {
			if params[k][i] != again[k][i] {
				t.Fatalf("%s differs between runs with one seed", k)
			}
		}
	}
}

// Fit on the bundled subset: a few epochs from the trained model keep
// accuracy, weights honour their masks, and cancelling stops it.
func TestFit(t *testing.T) {
	m := loadModel(t, "resnet_small_train.onnx")
	e := newEngine(t, m, autodiff.Spec{BN: autodiff.BNTraining})
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	idx := make([]int, 512)
	for i := range idx {
		idx[i] = i
	}
	frozen := e.Param("fc.weight")
	frozen.Frozen = true
	before := append([]float32{}, frozen.Data...)
	steps := 0
	stats, err := Fit(context.Background(), e, ds.Train, idx, FitOptions{
		Epochs: 2, BatchSize: 128, Schedule: Cosine{Base: 0.01},
		Optimizer: &SGD{Momentum: 0.9, WeightDecay: 5e-4},
		Progress:  func(FitProgress) { steps++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(stats) != 2 || steps != 8 {
		t.Fatalf("%d epochs, %d steps", len(stats), steps)
	}
	if stats[1].Accuracy < 0.8 {
		t.Errorf("training accuracy %.3f after finetuning a model at 0.88", stats[1].Accuracy)
	}
	for i := range before {
		if math.Float32bits(before[i]) != math.Float32bits(frozen.Data[i]) {
			t.Fatal("frozen parameter changed")
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Fit(ctx, e, ds.Train, idx, FitOptions{}); err != context.Canceled {
		t.Errorf("cancelled Fit returned %v", err)
	}
}
