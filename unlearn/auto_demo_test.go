package unlearn

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/localize"
)

// TestAutoDemo compares the auto schedule with the fixed defaults on the
// bundled demo against the bundled oracle, for tuning the rule by hand (the
// measured comparison is the experiment grid's). It runs only with UNLEARN_AUTO set to a ';'-separated list of
// runs "algo:schedule[,key=value...]" (schedule auto or fixed; keys forget
// = nonIID|iid, mask = del|none, seed, lr, epochs, max, tol, track = 0|1):
//
//	UNLEARN_AUTO="rft:auto;rft:fixed;finetune:auto,mask=none" go test -run TestAutoDemo -v ./unlearn/
//
// Fixed runs track the proxies too unless track=0 (tracking trains without
// the held-out slice, as auto runs do). The DEL mask (budget 0.3) is computed by
// localize for the forget set used.
func TestAutoDemo(t *testing.T) {
	spec := os.Getenv("UNLEARN_AUTO")
	if spec == "" {
		t.Skip("set UNLEARN_AUTO to run")
	}
	testutil.RequireORT(t)
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]demo{}
	for _, name := range []string{"nonIID", "iid"} {
		ids, err := data.ReadIDs(testutil.Testdata(t, "demo", "forget_"+name+".txt"), ds.Train.Len())
		if err != nil {
			t.Fatal(err)
		}
		f, r := data.ForgetRetain(ds.Train.Len(), ids)
		sets[name] = demo{ds: ds, forget: f, retain: r}
	}
	oracles := map[string]accs{}
	for _, run := range strings.Split(spec, ";") {
		algo, opts, _ := strings.Cut(run, ":")
		sched, kvs, _ := strings.Cut(opts, ",")
		set, maskKind := "nonIID", "del"
		cfg := Config{Runtime: testRuntime, Schedule: sched}
		if sched == ScheduleFixed {
			cfg.Proxies.Track = true
		}
		if kvs != "" {
			for _, kv := range strings.Split(kvs, ",") {
				k, v, _ := strings.Cut(kv, "=")
				f, _ := strconv.ParseFloat(v, 64)
				switch k {
				case "forget":
					set = v
				case "mask":
					maskKind = v
				case "seed":
					cfg.Seed = uint64(f)
				case "lr":
					cfg.LR = f
				case "epochs":
					cfg.Epochs = int(f)
				case "max":
					cfg.Auto.MaxEpochs = int(f)
				case "track":
					cfg.Proxies.Track = f != 0
				case "tol":
					cfg.Auto.ForgetTolerance, cfg.Auto.UtilityTolerance = f, f
				}
			}
		}
		d := sets[set]
		if _, ok := oracles[set]; !ok {
			oracles[set] = measure(t, loadModel(t, "demo", "oracle_resnet_small.onnx"), d)
			orig := measure(t, loadModel(t, "resnet_small_train.onnx"), d)
			t.Logf("%-8s original forget %.3f retain %.3f test %.3f; oracle forget %.3f retain %.3f test %.3f", set,
				orig.forget, orig.retain, orig.test, oracles[set].forget, oracles[set].retain, oracles[set].test)
		}
		m := loadModel(t, "resnet_small_train.onnx")
		var mask map[string][]bool
		if maskKind == "del" {
			mk, _, err := localize.Localize(context.Background(), m, ds.Train, d.forget, localize.Options{Strategy: "del", Budget: 0.3, Runtime: testRuntime})
			if err != nil {
				t.Fatal(err)
			}
			mask = mk.Elements
		}
		start := time.Now()
		res, err := Run(context.Background(), algo, Input{Model: m, Data: ds, Forget: d.forget, Retain: d.retain, Mask: mask}, cfg)
		if err != nil {
			t.Errorf("%s: %v", run, err)
			continue
		}
		sec := time.Since(start).Seconds()
		a := measure(t, m, d)
		o := oracles[set]
		t.Logf("%-40s forget %.3f retain %.3f test %.3f  Δforget %+.3f Δtest %+.3f  %.1fs (%d epochs)", run, a.forget, a.retain, a.test,
			o.forget-a.forget, o.test-a.test, sec, len(res.Epochs))
		if pl := res.Proxies; pl != nil {
			b := pl.Before
			t.Logf("    proxies before: forget %.3f ref %.3f holdout %.3f/%.3f mia %+v", b.ForgetAccuracy, b.ReferenceAccuracy, b.HoldoutAccuracy, b.HoldoutLoss, b.MIA)
			for _, e := range pl.Epochs {
				mia := ""
				if e.MIA != nil {
					mia = strconv.FormatFloat(e.MIA.Forget, 'f', 3, 64) + "/" + strconv.FormatFloat(e.MIA.Reference, 'f', 3, 64)
				}
				t.Logf("    epoch %2d lr %.4f: forget %.3f ref %.3f gap %+.3f holdout %.3f loss %.3f mia %s (%.1fs)", e.Epoch, e.LR,
					e.ForgetAccuracy, e.ReferenceAccuracy, e.ForgetGap, e.HoldoutAccuracy, e.HoldoutLoss, mia, e.Seconds)
			}
		}
		if pl := res.Proxies; pl != nil {
			op, err := eval.EvaluateProxies(loadModel(t, "demo", "oracle_resnet_small.onnx"), ds, d.forget, pl.Holdout, pl.Reference, testRuntime, 256, eval.ProxyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("    oracle proxies: forget %.3f ref %.3f gap %+.3f holdout %.3f; input test weighted like the slice %.3f", op.ForgetAccuracy, op.ReferenceAccuracy, op.ForgetGap, op.HoldoutAccuracy, pl.BeforeMatchedTest)
		}
		if res.Auto != nil {
			t.Logf("    auto: lr %g (range test %v, start %.3f, %.1fs), stop epoch %d: %s", res.Auto.LR, res.Auto.RangeTest, res.Auto.StartLoss, res.Auto.RangeS, res.Auto.StopEpoch, res.Auto.Detail)
		}
	}
}
