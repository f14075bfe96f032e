package unlearn

import (
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
)

// A result more than MaxTestDrop below the input's test accuracy gets a
// warning with both numbers; within it, or with nothing to compare, none.
func TestTestDropNote(t *testing.T) {
	met := func(test float64) *eval.Metrics {
		return &eval.Metrics{Metrics: schema.Metrics{Accuracy: schema.Accuracies{Test: test}}}
	}
	n := testDropNote(met(0.760), met(0.573), nil)
	for _, want := range []string{"warning: ", "76.00%", "57.30%", "18.7 points"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if n := testDropNote(met(0.841), met(0.814), nil); n != "" {
		t.Errorf("a 2.7-point drop (the demo's): %q", n)
	}
	if n := testDropNote(nil, met(0.5), nil); n != "" {
		t.Errorf("no input accuracy: %q", n)
	}
	pl := &schema.ProxyLog{}
	pl.Before.TestAccuracy = 0.9
	if n := testDropNote(nil, met(0.8), pl); !strings.Contains(n, "90.00%") {
		t.Errorf("from the proxies' baseline: %q", n)
	}
}

// A recipe note says how long the run trained: the fixed recipe's epochs,
// or what the auto schedule trained (and its result epoch when it differs),
// at the rate actually used.
func TestTrainedFor(t *testing.T) {
	r := &run{cfg: Config{Epochs: 1, LR: 0.1}, res: &Result{}}
	if got := r.trainedFor(); got != "for 1 epoch" || r.rate() != 0.1 {
		t.Errorf("fixed: %q, lr %g", got, r.rate())
	}
	r.cfg.Epochs = 20
	r.res.Auto = &schema.AutoSchedule{StopEpoch: 16, Epoch: 13, MaxEpochs: 20, LR: 0.3}
	if got := r.trainedFor(); got != "for 16 epochs (auto schedule, at most 20), the result being epoch 13's state" || r.rate() != 0.3 {
		t.Errorf("auto: %q, lr %g", got, r.rate())
	}
	r.noteAfter(func() string { return "finetuned " + r.trainedFor() })
	r.note("after")
	if len(r.res.Notes) != 2 || r.res.Notes[0] != "" || r.later[0].i != 0 {
		t.Errorf("notes %q, later %v", r.res.Notes, r.later)
	}
}
