package unlearn

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/train"
)

// quick returns a configuration that keeps a test run short: one epoch, and
// for iu a short inverse-Fisher recursion.
func quick(algo string) Config {
	c := Config{Runtime: testRuntime, Epochs: 1}
	if algo == "iu" {
		c.IU.Samples = 40
	}
	return c
}

// initValues returns every initializer's float values (parameters and
// running statistics).
func initValues(t testing.TB, m *graph.Model) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, v := range m.Graph.Initializers {
		if v.Init == nil || v.Init.DType != graph.Float {
			continue
		}
		f, err := v.Init.Float32s()
		if err != nil {
			t.Fatal(err)
		}
		out[v.Name] = append([]float32(nil), f...)
	}
	return out
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// Every algorithm runs, changes only masked elements (rft: plus the whole
// classifier), with momentum and weight decay on, reports what it changed
// exactly, and writes nothing but parameters and running statistics.
func TestAlgorithmsHonourMask(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 2), every(d.retain, 8)
	for _, algo := range Algorithms() {
		t.Run(algo, func(t *testing.T) {
			m := loadModel(t, "resnet_small_train.onnx")
			before := initValues(t, m)
			params := paramValues(t, m)
			mask := randomMask(t, m, 0.3, 7)
			cfg := quick(algo)
			cfg.WeightDecay = 5e-4
			cfg.Momentum = 0.9
			if a, _ := LookupAlgorithm(algo); a.FromScratch {
				// retrain changes every parameter: a mask is refused
				// before anything changes (TestRetrainMethod* run it
				// without one).
				_, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: mask}, cfg)
				if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "no mask") {
					t.Errorf("with a mask: %v, want ErrInput", err)
				}
				for name, v := range initValues(t, m) {
					if !bitsEqual(v, before[name]) {
						t.Fatalf("%s changed by a refused run", name)
					}
				}
				return
			}
			if algo == "ssd" {
				cfg.SSD.Alpha = 10 // dampens something on a random mask
			}
			steps := 0
			cfg.Progress = func(p Progress) {
				steps++
				if p.Algorithm != algo || p.Phase == "" || p.Step < 1 || p.Step > p.Steps {
					t.Fatalf("bad progress %+v", p)
				}
			}
			res, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: mask}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if res.Algorithm != algo || len(res.Notes) == 0 || steps == 0 || res.Seconds <= 0 {
				t.Errorf("result %+v after %d progress calls", res, steps)
			}
			whole := map[string]bool{}
			if algo == "rft" {
				whole["fc.weight"], whole["fc.bias"] = true, true
			}
			after := initValues(t, m)
			total := 0
			for name, v := range after {
				old := before[name]
				if params[name] == nil {
					// running statistics: only training algorithms move them
					if (algo == "ssd" || algo == "iu") && !bitsEqual(old, v) {
						t.Errorf("%s: running statistic %s changed", algo, name)
					}
					continue
				}
				n := 0
				for i := range v {
					if math.Float32bits(v[i]) == math.Float32bits(old[i]) {
						continue
					}
					n++
					if !mask[name][i] && !whole[name] {
						t.Fatalf("%s[%d] outside the mask changed: %g → %g", name, i, old[i], v[i])
					}
				}
				if res.Changed[name] != n {
					t.Errorf("%s: Changed says %d, counted %d", name, res.Changed[name], n)
				}
				total += n
			}
			if total == 0 {
				t.Error("nothing changed")
			}
			if algo == "rft" && (res.Changed["fc.weight"] < 600 || res.Reset == 0) {
				t.Errorf("rft: classifier changed %d of 640, reset %d", res.Changed["fc.weight"], res.Reset)
			}
			if algo != "ssd" && algo != "iu" && len(res.Epochs) != 1 {
				t.Errorf("%d epoch stats", len(res.Epochs))
			}
		})
	}
}

// The forget accuracy moves the expected way on the demo, and finetuning
// keeps test accuracy.
func TestForgetAccuracyMoves(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	orig := loadModel(t, "resnet_small_train.onnx")
	f0 := accuracy(t, orig, d.ds.Train, d.forget)
	t0 := accuracy(t, orig, d.ds.Test, nil)
	cases := []struct {
		algo      string
		cfg       Config
		retainK   int     // use every k-th retain example
		maxForget float64 // forget accuracy must fall below f0 − this … (if > 0)
		testDrop  float64 // … and test accuracy stay within this of t0 (if > 0)
	}{
		{"neggrad", Config{}, 1, 0.1, 0},
		{"random-label", Config{Epochs: 2}, 4, 0.1, 0},
		{"rft", Config{Epochs: 2}, 4, 0.1, 0},
		{"finetune", Config{Epochs: 3}, 4, 0, 0.02},
	}
	for _, c := range cases {
		t.Run(c.algo, func(t *testing.T) {
			m := loadModel(t, "resnet_small_train.onnx")
			mask := delMask(t, m, "resnet_small_train_del_scores.npz", 0.3)
			c.cfg.Runtime = testRuntime
			if _, err := Run(context.Background(), c.algo, Input{Model: m, Data: d.ds, Forget: d.forget, Retain: every(d.retain, c.retainK), Mask: mask}, c.cfg); err != nil {
				t.Fatal(err)
			}
			f := accuracy(t, m, d.ds.Train, d.forget)
			te := accuracy(t, m, d.ds.Test, nil)
			t.Logf("%s: forget %.3f → %.3f, test %.3f → %.3f", c.algo, f0, f, t0, te)
			if c.maxForget > 0 && f > f0-c.maxForget {
				t.Errorf("forget accuracy %.3f, want below %.3f", f, f0-c.maxForget)
			}
			if c.testDrop > 0 && te < t0-c.testDrop {
				t.Errorf("test accuracy %.3f, want at least %.3f", te, t0-c.testDrop)
			}
		})
	}
}

// rft re-initialises masked elements as PyTorch does: with a learning rate
// too small to move float32 weights, the run's output shows the reset values.
func TestRFTResetFollowsPyTorchInit(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	m := loadModel(t, "resnet_small_train.onnx")
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	orig := paramValues(t, m)
	mask := randomMask(t, m, 0.5, 11)
	res, err := Run(context.Background(), "rft", Input{Model: m, Data: d.ds, Forget: d.forget, Retain: every(d.retain, 30), Mask: mask},
		Config{Runtime: testRuntime, Epochs: 1, LR: 1e-30})
	if err != nil {
		t.Fatal(err)
	}
	got := paramValues(t, m)
	selected := 0
	for _, l := range nm.Layers {
		b := 1 / math.Sqrt(float64(train.FanIn(l)))
		for _, mb := range l.Members {
			name := mb.Param.Name
			var sum2 float64
			cnt := 0
			for i, on := range mask[name] {
				v := float64(got[name][i])
				if !on {
					if !l.Standalone && strings.HasPrefix(name, "fc.") {
						continue // the classifier trains whole
					}
					if got[name][i] != orig[name][i] {
						t.Fatalf("%s[%d] outside the mask changed", name, i)
					}
					continue
				}
				selected++
				switch mb.Role {
				case graph.KindWeight, graph.KindBias:
					if math.Abs(v) > b*(1+1e-6) {
						t.Fatalf("%s[%d] = %g outside ±%g", name, i, v, b)
					}
					sum2 += v * v
					cnt++
				case graph.KindNormScale:
					if v != 1 {
						t.Fatalf("%s[%d] = %g, want 1", name, i, v)
					}
				case graph.KindNormBias:
					if math.Abs(v) > 1e-20 {
						t.Fatalf("%s[%d] = %g, want 0", name, i, v)
					}
				}
			}
			// U(−b, b) has standard deviation b/√3.
			if cnt > 2000 {
				if sd := math.Sqrt(sum2 / float64(cnt)); math.Abs(sd-b/math.Sqrt(3)) > 0.05*b {
					t.Errorf("%s: sd %.4g, want %.4g", name, sd, b/math.Sqrt(3))
				}
			}
		}
	}
	if res.Reset != selected {
		t.Errorf("Reset %d, mask selects %d", res.Reset, selected)
	}
}

// Same seed and thread count: bit-identical parameters and running
// statistics; another seed: different ones.
func TestDeterminism(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	forget, retain := every(d.forget, 2), every(d.retain, 16)
	for _, algo := range []string{"neggrad+", "random-label", "scrub"} {
		t.Run(algo, func(t *testing.T) {
			runOnce := func(seed uint64) map[string][]float32 {
				m := loadModel(t, "resnet_small_train.onnx")
				cfg := quick(algo)
				cfg.Seed = seed
				if _, err := Run(context.Background(), algo, Input{Model: m, Data: d.ds, Forget: forget, Retain: retain, Mask: randomMask(t, m, 0.5, 3)}, cfg); err != nil {
					t.Fatal(err)
				}
				return initValues(t, m)
			}
			a, b, c := runOnce(5), runOnce(5), runOnce(6)
			differs := false
			for name := range a {
				if !bitsEqual(a[name], b[name]) {
					t.Errorf("%s differs between two runs with one seed", name)
				}
				if !bitsEqual(a[name], c[name]) {
					differs = true
				}
			}
			if !differs {
				t.Error("another seed gave the same model")
			}
		})
	}
}

// Cancelling stops a run promptly with ctx.Err() and leaves the model as it
// was.
func TestCancellation(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	for _, algo := range Algorithms() {
		t.Run(algo, func(t *testing.T) {
			m := loadModel(t, "resnet_small_train.onnx")
			before := initValues(t, m)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			cfg := quick(algo)
			calls := 0
			cfg.Progress = func(Progress) {
				calls++
				if calls == 2 {
					cancel()
				}
			}
			_, err := Run(ctx, algo, Input{Model: m, Data: d.ds, Forget: d.forget, Retain: every(d.retain, 4)}, cfg)
			if err != context.Canceled {
				t.Fatalf("got %v, want context.Canceled", err)
			}
			if calls > 2 {
				t.Errorf("%d steps after cancelling", calls-2)
			}
			for name, v := range initValues(t, m) {
				if !bitsEqual(v, before[name]) {
					t.Fatalf("%s changed by a cancelled run", name)
				}
			}
		})
	}
	m := loadModel(t, "resnet_small_train.onnx")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, "rft", Input{Model: m, Data: d.ds, Forget: d.forget, Retain: d.retain}, Config{Runtime: testRuntime}); err != context.Canceled {
		t.Errorf("cancelled before the start: %v", err)
	}
}

// A diverging run stops with train.ErrNonFinite and leaves the model alone.
func TestNonFinite(t *testing.T) {
	testutil.RequireORT(t)
	d := loadDemo(t)
	for _, c := range []struct {
		algo string
		cfg  Config
	}{
		{"neggrad", Config{LR: 1e30, Epochs: 3}},
		{"rft", Config{LR: 1e30, Epochs: 1}},
	} {
		m := loadModel(t, "resnet_small_train.onnx")
		before := initValues(t, m)
		c.cfg.Runtime = testRuntime
		_, err := Run(context.Background(), c.algo, Input{Model: m, Data: d.ds, Forget: d.forget, Retain: every(d.retain, 8)}, c.cfg)
		if !errors.Is(err, train.ErrNonFinite) {
			t.Fatalf("%s: got %v, want ErrNonFinite", c.algo, err)
		}
		t.Logf("%s: %v", c.algo, err)
		for name, v := range initValues(t, m) {
			if !bitsEqual(v, before[name]) {
				t.Fatalf("%s: %s changed by a failed run", c.algo, name)
			}
		}
	}
}

// Bad input is refused before anything runs.
func TestInputErrors(t *testing.T) {
	d := loadDemo(t)
	m := loadModel(t, "resnet_small_train.onnx")
	good := randomMask(t, m, 0.3, 1)
	short := map[string][]bool{"fc.weight": make([]bool, 3)}
	unknown := map[string][]bool{"bn1.running_mean": make([]bool, 16)}
	empty := map[string][]bool{"fc.weight": make([]bool, 640)}
	cases := []struct {
		name, algo string
		in         Input
		cfg        Config
		want       error
	}{
		{"unknown algorithm", "no-such-algorithm", Input{Model: m, Data: d.ds, Retain: d.retain}, Config{}, ErrUnknownAlgorithm},
		{"no model", "rft", Input{Data: d.ds, Retain: d.retain}, Config{}, ErrInput},
		{"no data", "rft", Input{Model: m, Retain: d.retain}, Config{}, ErrInput},
		{"index out of range", "rft", Input{Model: m, Data: d.ds, Retain: []int{0, 4000}}, Config{}, ErrInput},
		{"negative index", "rft", Input{Model: m, Data: d.ds, Retain: []int{-1}}, Config{}, ErrInput},
		{"overlap", "rft", Input{Model: m, Data: d.ds, Forget: []int{3}, Retain: []int{1, 2, 3}}, Config{}, ErrInput},
		{"duplicate", "rft", Input{Model: m, Data: d.ds, Retain: []int{1, 1}}, Config{}, ErrInput},
		{"no forget set", "neggrad", Input{Model: m, Data: d.ds, Retain: d.retain}, Config{}, ErrInput},
		{"no retain set", "finetune", Input{Model: m, Data: d.ds, Forget: d.forget}, Config{}, ErrInput},
		{"mask length", "finetune", Input{Model: m, Data: d.ds, Retain: d.retain, Mask: short}, Config{}, ErrInput},
		{"mask names state", "finetune", Input{Model: m, Data: d.ds, Retain: d.retain, Mask: unknown}, Config{}, ErrInput},
		{"empty mask", "finetune", Input{Model: m, Data: d.ds, Retain: d.retain, Mask: empty}, Config{}, ErrInput},
		{"negative epochs", "finetune", Input{Model: m, Data: d.ds, Retain: d.retain, Mask: good}, Config{Epochs: -1}, ErrInput},
		{"beta", "neggrad+", Input{Model: m, Data: d.ds, Forget: d.forget, Retain: d.retain}, Config{Beta: 2}, ErrInput},
	}
	before := initValues(t, m)
	for _, c := range cases {
		_, err := Run(context.Background(), c.algo, c.in, c.cfg)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	for name, v := range initValues(t, m) {
		if !bitsEqual(v, before[name]) {
			t.Fatalf("%s changed", name)
		}
	}
}

// Defaults fill zero fields; negative momentum and weight decay mean zero.
func TestDefaults(t *testing.T) {
	for _, a := range Algorithms() {
		d := Defaults(a)
		if d.BatchSize != 128 || d.Momentum != 0.9 {
			t.Errorf("%s: %+v", a, d)
		}
		if a != "ssd" && a != "iu" && (d.Epochs < 1 || d.LR <= 0) {
			t.Errorf("%s: %d epochs at lr %g", a, d.Epochs, d.LR)
		}
	}
	c := Config{Momentum: -1, WeightDecay: -1, LR: 0.5}.withDefaults("scrub")
	if c.Momentum != 0 || c.WeightDecay != 0 || c.LR != 0.5 || c.Epochs != 3 || c.SCRUB.Temperature != 4 || c.SCRUB.ForgetBatchSize != 32 {
		t.Errorf("%+v", c)
	}
	// Every algorithm's own settings are filled whichever algorithm runs,
	// so that a recorded Config (score's settings.json) keeps its form; the
	// proxies' defaults are Run's, and IU's sample count (0: its damping
	// + 2) is derived when it runs.
	d := Defaults("rft")
	if d.Beta != 0.99 || d.L1 != 7e-5 || d.SCRUB.Temperature != 4 || d.SSD.Alpha != 100 || d.IU.Damping != 1000 || d.IU.Samples != 0 || d.Proxies.HoldoutFraction != 0 {
		t.Errorf("rft's defaults lack another algorithm's settings, or fill the proxies or IU.Samples: %+v", d)
	}
	if got := Defaults("rft"); got.Epochs != 10 || got.LR != 0.03 {
		t.Errorf("rft defaults %+v", got)
	}
	if len(Algorithms()) != 10 {
		t.Errorf("%v", Algorithms())
	}
}
