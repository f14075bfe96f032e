package unlearn

import (
	"slices"
	"testing"
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
	p := job.progress(ScheduleAuto)
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
	p = (&Job{Algorithm: "ssd", Stage: job.Stage}).progress(ScheduleFixed)
	p(Progress{Algorithm: "ssd", Phase: "importance-forget", Step: 1, Steps: 7})
	p(Progress{Algorithm: "ssd", Phase: "importance-forget", Step: 2, Steps: 7})
	p(Progress{Algorithm: "ssd", Phase: "importance-full", Step: 1, Steps: 9})
	if want := []string{"ssd: importance-forget, 7 steps", "ssd: importance-full, 9 steps"}; !slices.Equal(lines, want) {
		t.Errorf("stage lines %q, want %q", lines, want)
	}
	if (&Job{}).progress(ScheduleAuto) != nil {
		t.Error("a job with neither Bar nor Stage has a progress callback")
	}
}
