package unlearn

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/setting"
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
	cfg, err = Configure("retrain", Recipe{Schedule: TrainConstant, Epochs: Some(2), LR: Some(0.1), Momentum: Some(zero), WeightDecay: Some(half)})
	if err != nil || cfg.TrainSchedule != TrainConstant || cfg.Schedule == ScheduleAuto || cfg.Epochs != 2 || cfg.LR != 0.1 ||
		cfg.Momentum != -1 || cfg.WeightDecay != 0.5 {
		t.Errorf("constant recipe: %+v, %v", cfg, err)
	}
	if c := cfg.withDefaults("retrain"); c.Momentum != 0 {
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
		"momentum 1":     {"finetune", Recipe{Momentum: Some(one)}, "momentum 1"},
		"negative decay": {"retrain", Recipe{WeightDecay: Some(neg)}, "weight decay -0.1"},
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
// from scratch would (the estimate from timed full training steps) says so
// with both numbers, the epochs assumed and what the estimate rests on,
// and suggests --method retrain; a run faster than that estimate, and
// retrain itself, get no note.
func TestCheaperRetrainNote(t *testing.T) {
	// 900 retain examples; full steps of 100 examples at 1 s: 9 s per
	// retraining epoch. The run (one epoch of 9 s) took 1 + 10 = 11 s.
	full := &RetrainTiming{Basis: schema.RetrainBasisTimed, Steps: 6, StepS: 1, WarmupS: 1, BatchSize: 100, CostS: 7.5}
	from := "" // where the job's RetrainEpochs came from
	section := func(algo string, retrainEpochs int, unlearnS float64) *schema.Unlearning {
		job := Job{Algorithm: algo, RetrainEpochs: retrainEpochs, retrainEpochsFrom: from,
			Suite: &eval.Suite{Retain: make([]int, 900), Forget: make([]int, 100)}}
		o := &Outcome{Result: &Result{Epochs: []schema.EpochStats{{Epoch: 1, Seconds: 9}}}}
		rt := full
		if !job.needsRetrainTiming(o.Result) {
			rt = nil
		}
		return worded(job.section("full", 1, Config{BatchSize: 100}, o, nil, schema.UnlearningTimings{LocalizeS: 1, UnlearnS: unlearnS}, rt))
	}
	// --retrain-epochs 1: 9 s < 11 s.
	u := section("finetune", 1, 10)
	n := cheaperNote(u)
	for _, want := range []string{"retraining is cheaper here", "for 1 epoch (--retrain-epochs)", "about 9 s (timed: 6 full training steps, 7.5 s)", "this run's 11 s", "--method retrain", "--epochs 1"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if u.RetrainEpochs != 1 || u.RetrainEstimateS != 9 || !(u.Speedup < 1) || u.RetrainEpochsFrom != schema.RetrainEpochsFlag {
		t.Errorf("estimate %d epochs (from %q), %g s, speedup %g", u.RetrainEpochs, u.RetrainEpochsFrom, u.RetrainEstimateS, u.Speedup)
	}
	// The same epochs from the model's metadata: the note names the key.
	from = schema.RetrainEpochsMetadata
	u = section("finetune", 1, 10)
	if n := cheaperNote(u); !strings.Contains(n, "for 1 epoch (the model's unlearn.train_epochs metadata)") || u.RetrainEpochsFrom != from {
		t.Errorf("epochs from metadata: note %q, from %q", n, u.RetrainEpochsFrom)
	}
	from = ""
	// --retrain-epochs 8: 72 s > 11 s; no note, the estimate as before.
	if u := section("finetune", 8, 10); cheaperNote(u) != "" || u.RetrainEstimateS != 72 {
		t.Errorf("a run cheaper than retraining: note %q, estimate %g", cheaperNote(u), u.RetrainEstimateS)
	}
	// No --retrain-epochs: the retrain method's 3 epochs are assumed
	// (27 s); a 41 s run gets the note, an 11 s one does not, and neither
	// gets the estimate fields (they stay --retrain-epochs'), but both
	// record the timing the note rests on.
	u = section("rft", 0, 40)
	n = cheaperNote(u)
	for _, want := range []string{"retraining may be cheaper here", "for 3 epochs (assumed", "--retrain-epochs N", "about 27 s (timed: 6 full", "this run's 41 s", "--method retrain"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if u.RetrainEstimateS != 0 || u.RetrainEpochs != 0 {
		t.Errorf("estimate fields without --retrain-epochs: %+v", u)
	}
	if u.RetrainEstimateBasis != schema.RetrainBasisTimed || u.RetrainStepS != 1 || u.RetrainStepsTimed != 6 || u.Timings.RetrainTimingS != 7.5 {
		t.Errorf("basis %q, step %g s, %d steps timed in %g s", u.RetrainEstimateBasis, u.RetrainStepS, u.RetrainStepsTimed, u.Timings.RetrainTimingS)
	}
	if n := cheaperNote(section("rft", 0, 10)); n != "" {
		t.Errorf("11 s against 27 s: %q", n)
	}
	// Retrain is its own measurement: no steps timed, no note; its
	// estimate is its own epoch's 9 s.
	u = section("retrain", 1, 10)
	if n := cheaperNote(u); n != "" {
		t.Errorf("retrain itself: %q", n)
	}
	if u.RetrainEstimateS != 9 || u.RetrainEstimateBasis != schema.RetrainBasisRun || u.RetrainStepS != 1 || u.RetrainStepsTimed != 0 || u.Timings.RetrainTimingS != 0 {
		t.Errorf("retrain's own estimate: %g s, basis %q, step %g s, %d steps timed in %g s", u.RetrainEstimateS, u.RetrainEstimateBasis, u.RetrainStepS, u.RetrainStepsTimed, u.Timings.RetrainTimingS)
	}
	if n := cheaperRetrainNote(0, 3, "", 10, ""); n != nil {
		t.Errorf("no estimate: %q", n)
	}
}

// worded is a section with its notes worded as the command words them.
func worded(u *schema.Unlearning, notes []setting.Note) *schema.Unlearning {
	(&runNotes{notes: notes}).fill(u, flagtext.Terms)
	return u
}

// cheaperNote is the run's note that retraining may be cheaper, or "".
func cheaperNote(u *schema.Unlearning) string {
	for _, n := range u.Notes {
		if strings.Contains(n, "cheaper") {
			return n
		}
	}
	return ""
}

// The retraining estimate rests on full training steps, not on the
// unlearning's own speed: an unlearning epoch that trained the mask and
// the classifier above a depth floor took 9 s for 900 examples, a full
// step of 100 examples takes 2 s, so retraining one epoch takes 18 s (plus
// the first step's extra 3 s), not 9. The run took 11 s: by its own speed
// retraining would have been cheaper, by full steps it is not, and the
// note flips with the estimate. Only the runs that need an estimate time
// steps.
func TestRetrainEstimateFullSteps(t *testing.T) {
	job := Job{Algorithm: "rft", RetrainEpochs: 1, Suite: &eval.Suite{Retain: make([]int, 900), Forget: make([]int, 100)}}
	o := &Outcome{Result: &Result{Epochs: []schema.EpochStats{{Epoch: 1, Seconds: 9}}}}
	tm := schema.UnlearningTimings{LocalizeS: 1, UnlearnS: 10}
	ownSpeed := 9.0 // the unlearning's seconds per example × 900 × 1 epoch
	rt := &RetrainTiming{Basis: schema.RetrainBasisTimed, Steps: 4, StepS: 2, WarmupS: 5, BatchSize: 100, CostS: 13}
	u := worded(job.section("del", 0.1, Config{BatchSize: 100}, o, nil, tm, rt))
	if u.RetrainEstimateS != 21 || !(u.RetrainEstimateS > ownSpeed) || u.Speedup != 21.0/11 {
		t.Errorf("estimate %g s, speedup %g; want 9 steps × 2 s + 3 s = 21 s, above the unlearning's own %g s", u.RetrainEstimateS, u.Speedup, ownSpeed)
	}
	if n := cheaperNote(u); n != "" {
		t.Errorf("a run cheaper than full-step retraining advises retraining: %q", n)
	}
	if u.RetrainEstimateBasis != schema.RetrainBasisTimed || u.RetrainStepS != 2 || u.RetrainStepsTimed != 4 || u.Timings.RetrainTimingS != 13 {
		t.Errorf("basis %q, step %g s, %d steps timed in %g s", u.RetrainEstimateBasis, u.RetrainStepS, u.RetrainStepsTimed, u.Timings.RetrainTimingS)
	}
	// Full steps as fast as the unlearning's (0.9 s per 100 examples):
	// 8.1 s + 0.1 s < 11 s, and the note says so.
	fast := &RetrainTiming{Basis: schema.RetrainBasisTimed, Steps: 8, StepS: 0.9, WarmupS: 1, BatchSize: 100, CostS: 9}
	if n := cheaperNote(worded(job.section("del", 0.1, Config{BatchSize: 100}, o, nil, tm, fast))); !strings.Contains(n, "about 8 s (timed: 8 full training steps, 9.0 s)") {
		t.Errorf("note %q", n)
	}
	// Without a timing (none taken, or it failed) there is no estimate
	// and no note.
	if u := worded(job.section("del", 0.1, Config{BatchSize: 100}, o, nil, tm, nil)); u.RetrainEstimateS != 0 || u.RetrainEstimateBasis != "" || cheaperNote(u) != "" {
		t.Errorf("no timing: estimate %g s, basis %q, note %q", u.RetrainEstimateS, u.RetrainEstimateBasis, cheaperNote(u))
	}
	for _, c := range []struct {
		algo   string
		epochs int
		trains bool // the run trained epochs over known examples
		want   bool
	}{
		{"rft", 0, true, true},      // the note needs an estimate
		{"rft", 8, true, true},      // --retrain-epochs
		{"ssd", 8, false, true},     // --retrain-epochs, though ssd has no epochs
		{"ssd", 0, false, false},    // nothing to estimate for
		{"retrain", 8, true, false}, // its own training is the measurement
		{"retrain", 0, true, false},
	} {
		res := &Result{}
		if c.trains {
			res.Epochs = o.Result.Epochs
		}
		if got := (&Job{Algorithm: c.algo, RetrainEpochs: c.epochs}).needsRetrainTiming(res); got != c.want {
			t.Errorf("%s, --retrain-epochs %d: times steps %v, want %v", c.algo, c.epochs, got, c.want)
		}
	}
	// The estimate: ⌈n ÷ batch⌉ steps per epoch, the first step's extra
	// once; nothing without a timing.
	if s := rt.Seconds(901, 2); s != 20*2+3 {
		t.Errorf("901 examples, 2 epochs: %g s", s)
	}
	if s := (*RetrainTiming)(nil).Seconds(900, 1); s != 0 {
		t.Errorf("no timing: %g s", s)
	}
}
