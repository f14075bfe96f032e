package unlearn_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// outsideFinetune is finetune written as a user would write it in their
// own package, with the method API alone (Runner's exported methods and
// the package's exported helpers): a masked engine in training mode, the
// per-epoch cosine, shuffled batches from the run's seeded stream, and
// Fit, which also drives it under the auto schedule. 0x0de7 is the stream
// the built-in algorithms draw their example order from; any other number
// gives another order.
func outsideFinetune(r *unlearn.Runner) error {
	e, err := r.Engine(unlearn.EngineOptions{BN: autodiff.BNTraining})
	if err != nil {
		return err
	}
	defer e.Close()
	r.NoteMask()
	r.NoteBN(e)
	r.NoteAfter(func() string { return "outside finetune trained " + r.TrainedFor() })
	cfg, in := r.Config(), r.Input()
	order := r.Rand(0x0de7)
	sel := make([]int, 0, cfg.BatchSize)
	err = r.Fit(unlearn.Loop{
		Engine: e, Optimizer: r.Optimizer(), Epochs: cfg.Epochs, LR: r.Cosine(0.01),
		Epoch: func(int) (int, unlearn.StepFunc, error) {
			batches := unlearn.TrainBatches(len(in.Retain), cfg.BatchSize, order)
			return len(batches), func(s int) (unlearn.Step, error) {
				sel = unlearn.Pick(sel, in.Retain, batches[s])
				return unlearn.LossStep(e, r.Train(), sel, r.Augmenter(), 1, "train")
			}, nil
		},
	})
	if err != nil {
		return err
	}
	return r.WriteBack(e)
}

var registerOutside sync.Once

// TestOutsideAlgorithmMatchesBuiltIn registers outsideFinetune from this
// package (outside unlearn) and runs it beside the built-in finetune on the
// same input, under the fixed and the auto schedule: the method API is
// enough to do what a built-in does, bit for bit, with the same epoch
// statistics, and the auto schedule drives it like a built-in.
func TestOutsideAlgorithmMatchesBuiltIn(t *testing.T) {
	testutil.RequireORT(t)
	registerOutside.Do(func() {
		err := unlearn.Register(unlearn.Algorithm{Name: "outside-finetune", Summary: "test only: finetune through the method API",
			Run: outsideFinetune, UsesRetain: true, Epochs: true, Augments: true,
			Defaults: func(c *unlearn.Config) { *c = withFinetuneDefaults(*c) }})
		if err != nil {
			t.Fatal(err)
		}
	})
	if !slices.Contains(unlearn.AutoAlgorithms(), "outside-finetune") || unlearn.Algorithms()[len(unlearn.Algorithms())-1] != "outside-finetune" {
		t.Fatalf("registered: auto %v, all %v", unlearn.AutoAlgorithms(), unlearn.Algorithms())
	}
	ds, forget, retainAll := testutil.Demo(t)
	var retain []int
	for i := 0; i < len(retainAll); i += 16 {
		retain = append(retain, retainAll[i])
	}
	for _, auto := range []bool{false, true} {
		cfg := unlearn.Config{Epochs: 1, BatchSize: 64, Seed: 7, Runtime: onnxrt.Options{Threads: 2}}
		if auto {
			cfg.Schedule, cfg.Epochs, cfg.Proxies.Track = unlearn.ScheduleAuto, 2, true
		}
		var got [2]map[string][]float32
		var res [2]*unlearn.Result
		for k, algo := range []string{"finetune", "outside-finetune"} {
			m, err := onnxio.Load(testutil.Testdata(t, "resnet_small_train.onnx"))
			if err != nil {
				t.Fatal(err)
			}
			in := unlearn.Input{Model: m, Data: ds, Forget: forget, Retain: retain, Mask: everyThird(t, m)}
			if res[k], err = unlearn.Run(context.Background(), algo, in, cfg); err != nil {
				t.Fatalf("auto %v: %s: %v", auto, algo, err)
			}
			got[k] = floats(t, m)
		}
		for name, want := range got[0] {
			if !slices.EqualFunc(want, got[1][name], func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
				t.Errorf("auto %v: %s differs between finetune and outside-finetune", auto, name)
			}
		}
		if fmt.Sprint(stats(res[0])) != fmt.Sprint(stats(res[1])) || len(res[0].Epochs) == 0 {
			t.Errorf("auto %v: epochs %v and %v", auto, stats(res[0]), stats(res[1]))
		}
		if auto != (res[1].Auto != nil) || len(res[1].Changed) == 0 {
			t.Errorf("auto %v: the outside algorithm's result has auto %v, %d parameters changed", auto, res[1].Auto != nil, len(res[1].Changed))
		}
	}
}

// withFinetuneDefaults fills c's zero epochs and rate as finetune does.
func withFinetuneDefaults(c unlearn.Config) unlearn.Config {
	d := unlearn.Defaults("finetune")
	if c.Epochs == 0 {
		c.Epochs = d.Epochs
	}
	if c.LR == 0 {
		c.LR = d.LR
	}
	return c
}

// everyThird selects every third element of every trainable parameter.
func everyThird(t *testing.T, m *graph.Model) map[string][]bool {
	t.Helper()
	nm, err := graph.Neurons(m.Graph)
	if err != nil {
		t.Fatal(err)
	}
	mask := map[string][]bool{}
	for _, p := range nm.Params {
		sel := make([]bool, m.Graph.LocalValue(p.Value.Name).Init.Len())
		for i := range sel {
			sel[i] = i%3 == 0
		}
		mask[p.Value.Name] = sel
	}
	return mask
}

func floats(t *testing.T, m *graph.Model) map[string][]float32 {
	t.Helper()
	out := map[string][]float32{}
	for _, v := range m.Graph.Initializers {
		if v.Init != nil && v.Init.DType == graph.Float {
			f, err := v.Init.Float32s()
			if err != nil {
				t.Fatal(err)
			}
			out[v.Name] = append([]float32(nil), f...)
		}
	}
	return out
}

// stats is the epochs' loss and accuracy (not their seconds).
func stats(r *unlearn.Result) [][2]float64 {
	var out [][2]float64
	for _, e := range r.Epochs {
		out = append(out, [2]float64{e.Loss, e.Accuracy})
	}
	return out
}
