package unlearn

import (
	"slices"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// The job's progress callback gives the range test its own bar and starts
// every stage (the range test, each epoch, a phase outside epochs) with one
// line, so that a log with no bar is never silent for a whole stage.
func TestProgressStages(t *testing.T) {
	var lines []string
	bars := map[string][][2]int{}
	job := &Job{Algorithm: "rft",
		Stage: func(event, text string, fields ...any) {
			if event != "stage" {
				t.Errorf("event %q", event)
			}
			lines = append(lines, text)
		},
		Bar: func(label string) func(done, total int) {
			return func(done, total int) { bars[label] = append(bars[label], [2]int{done, total}) }
		}}
	p, _ := job.progress(ScheduleAuto)
	for s := 1; s <= 4; s++ {
		p(Progress{Algorithm: "rft", Phase: "lr-range", Step: s, Steps: 4, Rates: 2, LR: 0.1})
	}
	for ep := 1; ep <= 2; ep++ {
		for s := 1; s <= 3; s++ {
			p(Progress{Algorithm: "rft", Phase: "train", Epoch: ep, Epochs: 5, Step: s, Steps: 3, LR: 0.09486832980505139 / float64(s)})
		}
	}
	want := []string{"range test: 2 rates × 2 steps", "epoch 1 of at most 5: 3 steps, lr 0.09487", "epoch 2 of at most 5: 3 steps, lr 0.09487"}
	if !slices.Equal(lines, want) {
		t.Errorf("stage lines %q, want %q", lines, want)
	}
	if r := bars["range test"]; len(r) != 4 || r[3] != [2]int{4, 4} {
		t.Errorf("range-test bar %v", r)
	}
	if b := bars["rft"]; len(b) != 6 || b[0] != [2]int{1, 15} || b[5] != [2]int{6, 15} {
		t.Errorf("training bar %v", b)
	}

	lines = nil
	p, _ = (&Job{Algorithm: "ssd", Stage: job.Stage}).progress(ScheduleFixed)
	p(Progress{Algorithm: "ssd", Phase: "importance-forget", Step: 1, Steps: 7})
	p(Progress{Algorithm: "ssd", Phase: "importance-forget", Step: 2, Steps: 7})
	p(Progress{Algorithm: "ssd", Phase: "importance-full", Step: 1, Steps: 9})
	if want := []string{"ssd: importance-forget, 7 steps", "ssd: importance-full, 9 steps"}; !slices.Equal(lines, want) {
		t.Errorf("stage lines %q, want %q", lines, want)
	}
	if p, e := (&Job{}).progress(ScheduleAuto); p != nil || e != nil {
		t.Error("a job with neither Bar, Stage nor Info has a progress callback")
	}
}

// An epoch's statistics are an "epoch" event as it ends, the auto
// schedule's decision a "decision" event with the numbers, and a stop ends
// the training's bar at the work done (done == total), not at the cap's.
func TestProgressEpochEvents(t *testing.T) {
	var infos, stages []string
	var fields []any
	var bar [][2]int
	job := &Job{Algorithm: "rft",
		Info: func(event, text string, _ ...any) { infos = append(infos, event+"\t"+text) },
		Stage: func(event, text string, f ...any) {
			if event == "decision" {
				stages, fields = append(stages, text), f
			}
		},
		Bar: func(string) func(done, total int) { return func(d, tot int) { bar = append(bar, [2]int{d, tot}) } }}
	p, epoch := job.progress(ScheduleAuto)
	for ep := 1; ep <= 2; ep++ {
		for s := 1; s <= 3; s++ {
			p(Progress{Phase: "train", Epoch: ep, Epochs: 20, Step: s, Steps: 3, LR: 0.1})
		}
		epoch(EpochEvent{Epochs: 20, Stats: &schema.EpochStats{Epoch: ep, Loss: 0.5, Accuracy: 0.8, Seconds: 1}})
		d := &schema.ProxyDecision{Stop: ep == 2, Reason: "unseen-and-recovered", Epoch: 2, Detail: "epoch 2: done"}
		if ep == 1 {
			d = &schema.ProxyDecision{Detail: "epoch 1: forget accuracy 0.9 vs reference 0.7"}
		}
		ep := &schema.EpochProxies{Epoch: ep, LR: 0.1, Decision: d}
		ep.ForgetAccuracy = 0.9
		epoch(EpochEvent{Epochs: 20, Decided: ep})
	}
	if want := []string{"epoch\tepoch 1  loss 0.5000  acc 80.00%  1.0s", "epoch\tepoch 2  loss 0.5000  acc 80.00%  1.0s"}; !slices.Equal(infos, want) {
		t.Errorf("epoch events %q, want %q", infos, want)
	}
	if want := []string{"auto schedule: go on: epoch 1: forget accuracy 0.9 vs reference 0.7",
		"auto schedule: stop (unseen-and-recovered): epoch 2: done"}; !slices.Equal(stages, want) {
		t.Errorf("decisions %q, want %q", stages, want)
	}
	got := map[any]any{}
	for i := 0; i+1 < len(fields); i += 2 {
		got[fields[i]] = fields[i+1]
	}
	if got["stop"] != true || got["reason"] != "unseen-and-recovered" || got["result_epoch"] != 2 ||
		got["forget_accuracy"] != 0.9 || got["epoch"] != 2 {
		t.Errorf("decision fields %v", got)
	}
	if last := bar[len(bar)-1]; last != [2]int{6, 6} {
		t.Errorf("the bar ended at %v, want 6 of 6 (two epochs of 3 steps, the cap's 60 no more)", last)
	}
}
