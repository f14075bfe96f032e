package unlearn

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/internal/testutil"
)

// TestTuneDemo runs algorithms on the bundled demo (DEL mask from the
// committed PyTorch scores, or no mask) and logs forget/retain/test accuracy
// against the bundled oracle; it backs the defaults table in docs/METHODS.md. It runs
// only with UNLEARN_TUNE set:
//
//	UNLEARN_TUNE=1 go test -run TestTuneDemo -v ./unlearn/
//	UNLEARN_TUNE="rft:epochs=5,lr=0.05;neggrad:lr=0.02" UNLEARN_TUNE_BUDGET=0.3 ...
func TestTuneDemo(t *testing.T) {
	spec := os.Getenv("UNLEARN_TUNE")
	if spec == "" {
		t.Skip("set UNLEARN_TUNE to run")
	}
	testutil.RequireORT(t)
	d := loadDemo(t)
	oracle := measure(t, loadModel(t, "demo", "oracle_resnet_small.onnx"), d)
	orig := measure(t, loadModel(t, "resnet_small_train.onnx"), d)
	t.Logf("%-40s forget %.3f retain %.3f test %.3f", "original", orig.forget, orig.retain, orig.test)
	t.Logf("%-40s forget %.3f retain %.3f test %.3f", "oracle", oracle.forget, oracle.retain, oracle.test)
	budget := 0.3
	if b := os.Getenv("UNLEARN_TUNE_BUDGET"); b != "" {
		budget, _ = strconv.ParseFloat(b, 64)
	}
	var runs []string
	if spec == "1" {
		runs = Algorithms()
	} else {
		runs = strings.Split(spec, ";")
	}
	for _, r := range runs {
		algo, opts, _ := strings.Cut(r, ":")
		cfg := Config{Runtime: testRuntime}
		if opts != "" {
			for _, kv := range strings.Split(opts, ",") {
				k, v, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(v, 64)
				switch k {
				case "epochs":
					cfg.Epochs = int(f)
				case "lr":
					cfg.LR = f
				case "wd":
					cfg.WeightDecay = f
				case "bs":
					cfg.BatchSize = int(f)
				case "beta":
					cfg.Beta = f
				case "l1":
					cfg.L1 = f
				case "alpha":
					cfg.SSD.Alpha, cfg.IU.Alpha, cfg.SCRUB.Alpha = f, f, f
				case "lambda":
					cfg.SSD.Lambda = f
				case "msteps":
					cfg.SCRUB.MaxSteps = int(f)
				case "seed":
					cfg.Seed = uint64(f)
				case "samples":
					cfg.IU.Samples = int(f)
				}
			}
		}
		m := loadModel(t, "resnet_small_train.onnx")
		var mask map[string][]bool
		if budget < 1 {
			mask = delMask(t, m, "resnet_small_train_del_scores.npz", budget)
		}
		start := time.Now()
		res, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: d.forget, Retain: d.retain, Mask: mask}, cfg)
		if err != nil {
			t.Errorf("%s: %v", r, err)
			continue
		}
		a := measure(t, m, d)
		changed := 0
		for _, n := range res.Changed {
			changed += n
		}
		t.Logf("%-40s forget %.3f retain %.3f test %.3f  Δforget %+.3f Δtest %+.3f  %.1fs changed %d", r, a.forget, a.retain, a.test,
			oracle.forget-a.forget, oracle.test-a.test, time.Since(start).Seconds(), changed)
		if testing.Verbose() && os.Getenv("UNLEARN_TUNE_NOTES") != "" {
			for _, n := range res.Notes {
				t.Log("   ", n)
			}
			t.Log("   ", fmt.Sprint(res.Epochs))
		}
	}
}
