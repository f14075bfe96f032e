package unlearn_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/testutil"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestRetrainFromScratchExcluding retrains the bundled model's graph from
// scratch without the demo's forget set, for one short epoch: it trains on
// the rest of the training split only, reports each epoch, writes a model
// with the input's graph, leaves the input alone, and a second run with the
// same seed writes the same bits.
func TestRetrainFromScratchExcluding(t *testing.T) {
	testutil.RequireORT(t)
	model := testutil.Testdata(t, "resnet_small_train.onnx")
	in, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ids, err := data.ReadIDs(testutil.Testdata(t, "demo", "forget_nonIID.txt"), ds.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var events []string
	job := unlearn.RetrainJob{ModelPath: model, Data: ds, Exclude: ids, FromScratch: true,
		Epochs: 1, LR: 0.05, BatchSize: 128, Momentum: 0.9, WeightDecay: 5e-4, Seed: 3,
		Runtime: onnxrt.Options{Threads: 2}, Out: filepath.Join(dir, "a.onnx"),
		Info: func(event, text string, fields ...any) { events = append(events, event) }}
	res, err := unlearn.Retrain(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	if res.Examples != ds.Train.Len()-len(ids) || len(res.Epochs) != 1 || res.TrainS <= 0 {
		t.Errorf("trained on %d examples (want %d), %d epochs, %g s", res.Examples, ds.Train.Len()-len(ids), len(res.Epochs), res.TrainS)
	}
	// From scratch, one epoch on 3,600 examples is far from the trained
	// model (about 84 % test accuracy) and above chance (10 %; this seed
	// reaches about 18 %).
	if !(res.TestAccuracy > 0.12 && res.TestAccuracy < 0.8) || !(res.TrainAccuracy > 0.12) {
		t.Errorf("accuracy train %.3f, test %.3f", res.TrainAccuracy, res.TestAccuracy)
	}
	if strings.Join(events, ",") != "train,epoch" {
		t.Errorf("events %v, want train, epoch", events)
	}
	if after, _ := os.ReadFile(model); !bytes.Equal(in, after) {
		t.Fatal("the input model changed")
	}
	a, err := onnxio.Load(job.Out)
	if err != nil {
		t.Fatal(err)
	}
	orig, _ := onnxio.Load(model)
	if len(a.Graph.Nodes()) != len(orig.Graph.Nodes()) || a.Opset("") != orig.Opset("") {
		t.Errorf("graph changed: %d nodes, opset %d; was %d, %d", len(a.Graph.Nodes()), a.Opset(""), len(orig.Graph.Nodes()), orig.Opset(""))
	}
	job.Out, job.Info = filepath.Join(dir, "b.onnx"), nil
	if _, err := unlearn.Retrain(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	ab, _ := os.ReadFile(filepath.Join(dir, "a.onnx"))
	bb, _ := os.ReadFile(job.Out)
	if !bytes.Equal(ab, bb) {
		t.Error("two runs with the same seed and threads wrote different models")
	}
}

// TestRetrainRefuses checks that settings no training can run with are
// refused before anything is read or written, naming the RetrainJob field.
func TestRetrainRefuses(t *testing.T) {
	ds := &data.Dataset{Train: &data.Split{}}
	out := filepath.Join(t.TempDir(), "m.onnx")
	good := unlearn.RetrainJob{ModelPath: "absent.onnx", Data: ds, Epochs: 1, LR: 0.1, BatchSize: 8, Out: out}
	for name, c := range map[string]struct {
		change func(*unlearn.RetrainJob)
		want   string
	}{
		"no data":        {func(j *unlearn.RetrainJob) { j.Data = nil }, "no data"},
		"zero epochs":    {func(j *unlearn.RetrainJob) { j.Epochs = 0 }, "Epochs 0"},
		"zero rate":      {func(j *unlearn.RetrainJob) { j.LR = 0 }, "LR 0"},
		"zero batch":     {func(j *unlearn.RetrainJob) { j.BatchSize = 0 }, "BatchSize 0"},
		"momentum 1":     {func(j *unlearn.RetrainJob) { j.Momentum = 1 }, "Momentum 1"},
		"negative decay": {func(j *unlearn.RetrainJob) { j.WeightDecay = -1 }, "WeightDecay -1"},
		"schedule":       {func(j *unlearn.RetrainJob) { j.Schedule = "zigzag" }, `"zigzag"`},
	} {
		job := good
		c.change(&job)
		_, err := unlearn.Retrain(context.Background(), job)
		if !errors.Is(err, unlearn.ErrInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInput naming %s", name, err, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused job wrote its output")
	}
}

// TestRetrainMethodEqualsTrain: --method retrain through the one pipeline
// (unlearn.Unlearn) on the bundled demo, one epoch with augmentation, writes
// the same parameters and running statistics, bit for bit, as Retrain (what
// `unlearn train --exclude FORGET --from-scratch` runs) with the same seed,
// recipe and threads; every parameter changes, the audit holds with
// strategy full, metrics.json says it is exact unlearning by retraining,
// the oracle comparison is there, and no proxies slice was held out.
func TestRetrainMethodEqualsTrain(t *testing.T) {
	testutil.RequireORT(t)
	model := testutil.Testdata(t, "resnet_small_train.onnx")
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	forgetPath := testutil.Testdata(t, "demo", "forget_nonIID.txt")
	ids, err := data.ReadIDs(forgetPath, ds.Train.Len())
	if err != nil {
		t.Fatal(err)
	}
	aug, err := data.ParseAugment("pad=4,flip")
	if err != nil {
		t.Fatal(err)
	}
	rt := onnxrt.Options{Threads: 2}
	dir := t.TempDir()
	trained := filepath.Join(dir, "train.onnx")
	if _, err := unlearn.Retrain(context.Background(), unlearn.RetrainJob{ModelPath: model, Data: ds, Exclude: ids, FromScratch: true,
		Epochs: 1, LR: unlearn.TrainLR, BatchSize: 128, Momentum: 0.9, WeightDecay: unlearn.TrainWeightDecay, Seed: 5, Augment: aug,
		Runtime: rt, Out: trained}); err != nil {
		t.Fatal(err)
	}

	suite, err := eval.NewSuite(ds, forgetPath, ids, eval.Options{Runtime: rt, BatchSize: 256, NoMIA: true})
	if err != nil {
		t.Fatal(err)
	}
	method, _ := unlearn.LookupMethod("retrain")
	cfg, err := unlearn.Configure(method.Algorithm, unlearn.Recipe{Epochs: unlearn.Some(1)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.BatchSize, cfg.Seed, cfg.Augment = 128, 5, aug
	out := filepath.Join(dir, "retrained.onnx")
	o, err := unlearn.Unlearn(context.Background(), unlearn.Job{ModelPath: model, Suite: suite,
		Method: method.Name, Strategy: method.Strategy, Budget: 1, Algorithm: method.Algorithm, Config: cfg,
		OraclePath: testutil.Testdata(t, "demo", "oracle_resnet_small.onnx"),
		Out:        out, MetricsPath: filepath.Join(dir, "metrics.json"), RetrainEpochs: 1})
	if err != nil {
		t.Fatal(err)
	}
	a, err := onnxio.Load(trained)
	if err != nil {
		t.Fatal(err)
	}
	b, err := onnxio.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range a.Graph.Initializers {
		if v.Init == nil {
			continue
		}
		w := b.Graph.LocalValue(v.Name)
		if w == nil || w.Init == nil || !bytes.Equal(v.Init.Raw, w.Init.Raw) {
			t.Errorf("initializer %s differs from train --exclude --from-scratch's", v.Name)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no initializers compared")
	}
	u, au := o.Report.Unlearning, o.Audit
	if u.Strategy != "full" || u.Algorithm != "retrain" || u.Method != "retrain" || u.Epochs != 1 || u.LR != unlearn.TrainLR ||
		u.WeightDecay != unlearn.TrainWeightDecay || u.Augment != aug.String() || u.Proxies != nil || u.Auto != nil {
		t.Errorf("unlearning section %+v", u)
	}
	if !au.BitIdentical || au.ChangedParams != au.TotalParams || au.TotalParams != 77754 {
		t.Errorf("audit: %d of %d parameters changed, bit-identical outside %v", au.ChangedParams, au.TotalParams, au.BitIdentical)
	}
	if o.Report.Oracle == nil || o.Report.Delta == nil {
		t.Error("no oracle comparison")
	}
	notes := strings.Join(u.Log.Notes, "\n")
	for _, want := range []string{"exact unlearning by retraining", "on the 3600 retain examples", "augmentation", "cosine per step"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if !strings.HasPrefix(strings.Join(u.Notes, "\n"), "exact unlearning by retraining: ") {
		t.Errorf("the run's notes do not begin by saying it is exact unlearning: %q", u.Notes)
	}
	if strings.Contains(strings.Join(u.Notes, "\n"), "cheaper") {
		t.Errorf("retrain suggests itself: %q", u.Notes)
	}
	if u.RetrainEpochs != 1 || !(u.RetrainEstimateS > 0) || u.RetrainEstimateBasis != "retrain-run" || u.RetrainStepsTimed != 0 || u.Timings.RetrainTimingS != 0 {
		t.Errorf("retraining estimate %d epochs, %g s, basis %q, %d steps timed in %g s", u.RetrainEpochs, u.RetrainEstimateS, u.RetrainEstimateBasis, u.RetrainStepsTimed, u.Timings.RetrainTimingS)
	}
}

// TimeRetrain times full training steps of the bundled model from scratch
// on a copy: one warm-up step, then at most the steps asked for, two even
// when the seconds allowed are none; the batch is at most the examples
// given; the model file is left as it was.
func TestTimeRetrain(t *testing.T) {
	testutil.RequireORT(t)
	model := testutil.Testdata(t, "resnet_small_train.onnx")
	in, err := os.ReadFile(model)
	if err != nil {
		t.Fatal(err)
	}
	ds, err := data.Open(testutil.Testdata(t, "fashion"), data.Options{})
	if err != nil {
		t.Fatal(err)
	}
	job := unlearn.RetrainJob{ModelPath: model, Data: ds, BatchSize: 32, Momentum: 0.9, WeightDecay: 5e-4, Seed: 1,
		Runtime: onnxrt.Options{Threads: 2}}
	for _, c := range []struct {
		examples, maxSteps int
		maxS               float64
		batch              int
		steps              func(int) bool
	}{
		{200, 3, 1e9, 32, func(n int) bool { return n == 3 }},
		{200, 8, 0, 32, func(n int) bool { return n == 2 }},
		{10, 2, 1e9, 10, func(n int) bool { return n == 2 }},
	} {
		rt, err := unlearn.TimeRetrain(context.Background(), job, data.Range(c.examples), c.maxSteps, c.maxS)
		if err != nil {
			t.Fatal(err)
		}
		if rt.Basis != "timed-full-steps" || !c.steps(rt.Steps) || rt.BatchSize != c.batch || !(rt.StepS > 0) || !(rt.WarmupS > 0) ||
			!(rt.CostS >= rt.WarmupS+float64(rt.Steps)*rt.StepS) {
			t.Errorf("%d examples, at most %d steps, %g s: %+v", c.examples, c.maxSteps, c.maxS, rt)
		}
	}
	if after, _ := os.ReadFile(model); !bytes.Equal(in, after) {
		t.Error("the model file changed")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := unlearn.TimeRetrain(ctx, job, data.Range(200), 3, 1e9); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
