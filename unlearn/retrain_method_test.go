package unlearn

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// The retrain method's recipe is the train command's: its defaults, the
// train command's schedules (cosine per step by default, or constant),
// never the auto schedule, never a held-out slice for the proxies; momentum
// and weight decay can be set (an explicit 0 meaning none) and are checked.
func TestConfigureRetrain(t *testing.T) {
	m, ok := LookupMethod("retrain")
	if !ok || m.Strategy != "full" || m.Algorithm != "retrain" {
		t.Fatalf("method retrain: %+v, %v", m, ok)
	}
	cfg, err := Configure("retrain", Recipe{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Epochs != TrainEpochs || cfg.LR != TrainLR || cfg.WeightDecay != TrainWeightDecay || cfg.Momentum != 0.9 || cfg.BatchSize != 128 ||
		cfg.Schedule == ScheduleAuto || cfg.TrainSchedule != "" || cfg.Proxies.Track {
		t.Errorf("retrain without a recipe: %+v", cfg)
	}
	if DefaultSchedule("retrain", false) != ScheduleFixed || slices.Contains(AutoAlgorithms(), "retrain") || !slices.Contains(AutoAlgorithms(), "rft") {
		t.Errorf("auto applies to %v; retrain's default schedule %s", AutoAlgorithms(), DefaultSchedule("retrain", false))
	}
	zero, half := 0.0, 0.5
	cfg, err = Configure("retrain", Recipe{Schedule: TrainConstant, Epochs: 2, LR: 0.1, Momentum: &zero, WeightDecay: &half})
	if err != nil || cfg.TrainSchedule != TrainConstant || cfg.Schedule == ScheduleAuto || cfg.Epochs != 2 || cfg.LR != 0.1 ||
		cfg.Momentum != -1 || cfg.WeightDecay != 0.5 {
		t.Errorf("constant recipe: %+v, %v", cfg, err)
	}
	if c := cfg.withDefaults(Defaults("retrain")); c.Momentum != 0 {
		t.Errorf("an explicit momentum 0 became %g", c.Momentum)
	}
	one, neg := 1.0, -0.1
	for name, r := range map[string]struct {
		algo string
		r    Recipe
		want string
	}{
		"auto":           {"retrain", Recipe{Schedule: ScheduleAuto}, "auto"},
		"rft cosine":     {"rft", Recipe{Schedule: TrainCosine}, `"cosine"`},
		"momentum 1":     {"finetune", Recipe{Momentum: &one}, "momentum 1"},
		"negative decay": {"retrain", Recipe{WeightDecay: &neg}, "weight decay -0.1"},
	} {
		if _, err := Configure(r.algo, r.r); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), r.want) {
			t.Errorf("%s: %v, want ErrInput naming %s", name, err, r.want)
		}
	}
	// A retrain job with a localized strategy or a mask file is refused
	// before anything is read.
	for _, job := range []Job{{Strategy: "del"}, {Strategy: "full", MaskPath: "m.json"}} {
		job.Suite, job.Algorithm, job.Out, job.MetricsPath = &eval.Suite{Data: &data.Dataset{Train: &data.Split{}}, ForgetPath: "f", Retain: []int{1}}, "retrain", "o.onnx", "m.json"
		if err := job.check(); !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), "no mask") {
			t.Errorf("%+v: %v", job.Strategy, err)
		}
	}
}

// The cheaper-retraining note: a run that took longer than retraining
// from scratch would (the estimate from this run's seconds per trained
// example) says so with both numbers and the epochs assumed, and suggests
// --method retrain; a run faster than that estimate, and retrain itself,
// get no note.
func TestCheaperRetrainNote(t *testing.T) {
	// 900 retain examples, one epoch of 9 s: 0.01 s per example, 9 s per
	// retraining epoch. The run took 1 + 10 = 11 s.
	section := func(algo string, retrainEpochs int, unlearnS float64) *schema.Unlearning {
		job := Job{Algorithm: algo, RetrainEpochs: retrainEpochs,
			Suite: &eval.Suite{Retain: make([]int, 900), Forget: make([]int, 100)}}
		o := &Outcome{Result: &Result{Epochs: []schema.EpochStats{{Epoch: 1, Seconds: 9}}}}
		return job.section("full", 1, Config{}, o, nil, schema.UnlearningTimings{LocalizeS: 1, UnlearnS: unlearnS})
	}
	note := func(u *schema.Unlearning) string {
		for _, n := range u.Notes {
			if strings.Contains(n, "cheaper") {
				return n
			}
		}
		return ""
	}
	// --retrain-epochs 1: 9 s < 11 s.
	u := section("finetune", 1, 10)
	n := note(u)
	for _, want := range []string{"retraining is cheaper here", "for 1 epoch (--retrain-epochs)", "about 9 s", "this run's 11 s", "--method retrain", "--epochs 1"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if u.RetrainEpochs != 1 || u.RetrainEstimateS != 9 || !(u.Speedup < 1) {
		t.Errorf("estimate %d epochs, %g s, speedup %g", u.RetrainEpochs, u.RetrainEstimateS, u.Speedup)
	}
	// --retrain-epochs 8: 72 s > 11 s; no note, the estimate as before.
	if u := section("finetune", 8, 10); note(u) != "" || u.RetrainEstimateS != 72 {
		t.Errorf("a run cheaper than retraining: note %q, estimate %g", note(u), u.RetrainEstimateS)
	}
	// No --retrain-epochs: the retrain method's 3 epochs are assumed
	// (27 s); a 41 s run gets the note, an 11 s one does not, and neither
	// gets the estimate fields (they stay --retrain-epochs').
	u = section("rft", 0, 40)
	n = note(u)
	for _, want := range []string{"retraining may be cheaper here", "for 3 epochs (assumed", "--retrain-epochs N", "about 27 s", "this run's 41 s", "--method retrain"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if u.RetrainEstimateS != 0 || u.RetrainEpochs != 0 {
		t.Errorf("estimate fields without --retrain-epochs: %+v", u)
	}
	if n := note(section("rft", 0, 10)); n != "" {
		t.Errorf("11 s against 27 s: %q", n)
	}
	if n := note(section("retrain", 1, 10)); n != "" {
		t.Errorf("retrain itself: %q", n)
	}
	if n := cheaperRetrainNote(0, 3, false, 10); n != "" {
		t.Errorf("no estimate: %q", n)
	}
}
