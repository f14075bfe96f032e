package unlearn

import (
	"context"
	"math"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// TestGradChannelsConfig: rft and scrub with Config.GradChannels (weight
// gradients of the selected output channels only) on a DEL mask end where
// they end without it, up to float32 rounding, and leave every element
// outside the mask bit-identical.
func TestGradChannelsConfig(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 4), every(d.retain, 16)
	for _, algo := range []string{"rft", "scrub"} {
		t.Run(algo, func(t *testing.T) {
			res := map[bool]map[string][]float32{}
			var orig map[string][]float32
			var mask map[string][]bool
			for _, on := range []bool{false, true} {
				m := loadModel(t, "resnet_small_train.onnx")
				orig = initValues(t, m)
				mask = delMask(t, m, "resnet_small_train_del_scores.npz", 0.1)
				cfg := quick(algo)
				cfg.Seed, cfg.Momentum, cfg.WeightDecay, cfg.BatchSize, cfg.GradChannels = 7, 0.9, 5e-4, 64, on
				if _, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: mask}, cfg); err != nil {
					t.Fatal(err)
				}
				res[on] = initValues(t, m)
			}
			worst := 0.0
			for name, off := range res[false] {
				on := res[true][name]
				scale := 0.0
				for i := range off {
					scale = max(scale, math.Abs(float64(off[i])))
				}
				for i := range off {
					if mk := mask[name]; mk != nil && !mk[i] && math.Float32bits(on[i]) != math.Float32bits(orig[name][i]) && algo != "rft" {
						t.Fatalf("%s[%d] outside the mask changed", name, i)
					}
					worst = max(worst, math.Abs(float64(on[i]-off[i]))/max(scale, 1e-12))
				}
			}
			t.Logf("max difference relative to each tensor's largest value: %.3g", worst)
			if worst > 1e-4 {
				t.Errorf("GradChannels on and off differ by %.3g (relative)", worst)
			}
		})
	}
}
