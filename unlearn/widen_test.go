package unlearn_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// TestWidenLadder: a run that cannot forget at its first budget (a mask of
// 1 % of the demo model's parameters, past the depth floor, at a rate too
// small to move the model, so the forget accuracy stays far above the
// oracle estimate) widens along the ladder, each rung from the input
// model: the rungs are recorded with the forget set still remembered at
// the first, the result's mask is the last rung's and holds more, the
// audit finds nothing changed outside it, the notes and an event say what
// was done, and, the ladder ended still remembering, one warning advises
// retraining from scratch. A ladder entry not above the budget is skipped.
func TestWidenLadder(t *testing.T) {
	o, events := stalledLadder(t, []float64{0.005, 0.015}, unlearn.Opt[float64]{})
	u := o.Report.Unlearning
	if len(u.Widen) != 2 || u.Widen[0].Budget != 0.01 || u.Widen[1].Budget != 0.015 {
		t.Fatalf("rungs %+v, want budgets 0.01 then 0.015 (auto %+v, after %+v)", u.Widen, u.Auto, u.Proxies.After)
	}
	if u.Widen[0].StillRemembers <= 0 || u.Widen[0].Reason == "" {
		t.Errorf("first rung %+v: want it still remembering, with the schedule's reason", u.Widen[0])
	}
	if !(u.Widen[1].Selected > u.Widen[0].Selected) {
		t.Errorf("the wider rung selected %d elements, the first %d", u.Widen[1].Selected, u.Widen[0].Selected)
	}
	if u.Budget != 0.015 || u.Mask == nil || u.Mask.Budget != 0.015 {
		t.Errorf("result budget %g, mask %+v: want the last rung's, 0.015", u.Budget, u.Mask)
	}
	if !o.Audit.BitIdentical {
		t.Errorf("audit: %v", o.Audit.Violations)
	}
	if u.Auto == nil || u.Auto.LR != 1e-7 || len(u.Auto.RangeTest) != 1 {
		t.Errorf("the wider rung should run a range test of its own: %+v", u.Auto)
	}
	notes := strings.Join(u.Notes, "\n")
	if !strings.Contains(notes, "mask widened while the forget set was still remembered") ||
		!strings.Contains(notes, "budget 0.01 (depth floor 0.4):") ||
		!strings.Contains(notes, "then budget 0.015 (depth floor 0.4):") {
		t.Errorf("notes do not say what the widening did: %q", u.Notes)
	}
	// The rate was too small to forget at any budget: the ladder ended still
	// remembering, which the run says, advising retraining.
	still := false
	for _, f := range u.Flags {
		still = still || f.Kind == schema.FlagStillRemembers && strings.Contains(f.Text, "retrain from scratch") &&
			strings.Contains(f.Text, "budget 0.015")
	}
	if !still || u.Vouched {
		t.Errorf("flags %+v (vouched %v): want still-remembers advising retraining", u.Flags, u.Vouched)
	}
	widened := false
	for _, e := range events {
		widened = widened || strings.HasPrefix(e, "widen\twidening the mask: at budget 0.01")
	}
	if !widened {
		t.Errorf("no widen event: %q", events)
	}
}

// TestWidenFloor: with WidenFloor the wider rungs localize under their own
// depth floor (here one that lets the mask reach every layer), the first
// rung under the run's, and the rungs, the mask, the note and the event
// say which.
func TestWidenFloor(t *testing.T) {
	o, events := stalledLadder(t, []float64{0.015}, unlearn.Some(0.0))
	u := o.Report.Unlearning
	if len(u.Widen) != 2 || u.Widen[0].DepthFloor != 0.4 || u.Widen[1].DepthFloor != 0 {
		t.Fatalf("rungs %+v: want floors 0.4 then 0", u.Widen)
	}
	if u.Mask == nil || u.Mask.DepthFloor != 0 || u.Mask.MinDepth != 0 {
		t.Errorf("mask %+v: want the wider rung's floor 0, every layer eligible", u.Mask)
	}
	if !o.Audit.BitIdentical {
		t.Errorf("audit: %v", o.Audit.Violations)
	}
	if notes := strings.Join(u.Notes, "\n"); !strings.Contains(notes, "budget 0.01 (depth floor 0.4):") ||
		!strings.Contains(notes, "then budget 0.015 (depth floor 0):") {
		t.Errorf("notes do not give each rung's floor: %q", u.Notes)
	}
	if !slices.ContainsFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "widen\t") && strings.HasSuffix(e, "at budget 0.015, depth floor 0")
	}) {
		t.Errorf("no widen event naming the new floor: %q", events)
	}
}

// stalledLadder runs DEL at budget 0.01 (depth floor 0.4) on the demo
// model under the auto schedule at a rate too small to move it (1e-7, one
// epoch), so that every rung still remembers, with the ladder widen and
// the wider rungs' floor; it returns the outcome and the info events.
func stalledLadder(t *testing.T, widen []float64, floor unlearn.Opt[float64]) (*unlearn.Outcome, []string) {
	t.Helper()
	suite, root := demoSuite(t)
	cfg, err := unlearn.Configure("rft", unlearn.Recipe{Schedule: unlearn.ScheduleAuto, MaxEpochs: unlearn.Some(1)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.Auto.LRs = []float64{1e-7}
	cfg.Proxies.NoMIA = true
	dir := t.TempDir()
	var events []string
	o, err := unlearn.Unlearn(context.Background(), unlearn.Job{
		ModelPath: filepath.Join(root, "testdata", "resnet_small_train.onnx"), Suite: suite,
		Method: "del", Strategy: "del", Budget: 0.01, DepthFloor: 0.4, Algorithm: "rft", Config: cfg, Widen: widen,
		WidenFloor: floor, Out: filepath.Join(dir, "u.onnx"), MetricsPath: filepath.Join(dir, "u.metrics.json"),
		Info: func(event, text string, _ ...any) { events = append(events, event+"\t"+text) },
	})
	if err != nil {
		t.Fatalf("the run stopped: %v", err)
	}
	return o, events
}
