package unlearn_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/unlearn"
)

// fieldsOf are the field paths err names: the field at fault, then the
// fields its message names.
func fieldsOf(err error) []string {
	var e *setting.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	if e.Field != "" {
		out = append(out, e.Field)
	}
	for _, r := range e.Msg.Settings() {
		if r.Field != "" {
			out = append(out, r.Field)
		}
	}
	return out
}

// TestSpecValidate: each bad Spec is refused with an error that names the
// fields at fault by their paths in Spec (never a flag), in plain terms.
func TestSpecValidate(t *testing.T) {
	ok := unlearn.Spec{ModelPath: "m.onnx", ForgetPath: "f.txt", BatchSize: 128}
	with := func(f func(*unlearn.Spec)) unlearn.Spec { s := ok; f(&s); return s }
	for _, c := range []struct {
		name   string
		spec   unlearn.Spec
		fields []string
		text   string
	}{
		{"no model", with(func(s *unlearn.Spec) { s.ModelPath = "" }), []string{"ModelPath"}, "ModelPath is required"},
		{"no forget set", with(func(s *unlearn.Spec) { s.ForgetPath = "" }), []string{"ForgetPath"}, "ForgetPath is"},
		{"unknown method", with(func(s *unlearn.Spec) { s.Method = unlearn.Some("amnesia") }), []string{"Method"},
			`Method "amnesia": unknown`},
		{"budget 1.5", with(func(s *unlearn.Spec) { s.Budget = unlearn.Some(1.5) }), []string{"Budget"},
			"Budget 1.5: must be in (0, 1]"},
		{"budget NaN", with(func(s *unlearn.Spec) { s.Budget = unlearn.Some(math.NaN()) }), []string{"Budget"},
			"Budget NaN: must be a finite number"},
		{"budget with a mask", with(func(s *unlearn.Spec) { s.Budget, s.MaskPath = unlearn.Some(0.2), "m.json" }),
			[]string{"Budget", "MaskPath"}, "Budget and MaskPath: the mask file records its own budget"},
		{"budget for retrain", with(func(s *unlearn.Spec) {
			s.Budget, s.Method = unlearn.Some(0.2), unlearn.Some("retrain")
		}), []string{"Budget", "Method", "Budget"}, "Budget and Method retrain"},
		{"strategy with a mask", with(func(s *unlearn.Spec) { s.Strategy, s.MaskPath = "del", "m.json" }),
			[]string{"Strategy", "MaskPath"}, "Strategy del and MaskPath m.json"},
		{"depth floor 1", with(func(s *unlearn.Spec) { s.DepthFloor = unlearn.Some(1.0) }), []string{"DepthFloor"},
			"DepthFloor: depth floor 1"},
		{"widen floor without widen", with(func(s *unlearn.Spec) { s.WidenFloor = unlearn.Some(0.2) }),
			[]string{"WidenFloor", "Widen", "Widen"}, "WidenFloor applies to the wider rungs of Widen"},
		{"widen floor 1", with(func(s *unlearn.Spec) { s.Widen, s.WidenFloor = "0.5", unlearn.Some(1.0) }),
			[]string{"WidenFloor"}, "WidenFloor: depth floor 1"},
		{"negative epochs", with(func(s *unlearn.Spec) { s.Recipe.Epochs = unlearn.Some(-1) }),
			[]string{"Recipe.Epochs"}, "Recipe.Epochs -1: must be ≥ 0"},
		{"zero batch", with(func(s *unlearn.Spec) { s.BatchSize = 0 }), []string{"BatchSize"}, "BatchSize 0"},
		{"unknown algorithm", with(func(s *unlearn.Spec) { s.Algorithm = "nope" }), []string{"Algorithm"},
			`Algorithm "nope"`},
		{"augment for ssd", with(func(s *unlearn.Spec) { s.Algorithm, s.Augment = "ssd", "flip" }),
			[]string{"Augment"}, "Augment flip: ssd does not augment"},
		{"bad augment", with(func(s *unlearn.Spec) { s.Augment = "crop=4" }), []string{"Augment"}, "Augment"},
		{"auto for ssd", with(func(s *unlearn.Spec) { s.Method, s.Recipe.Schedule = unlearn.Some("ssd"), "auto" }),
			[]string{"Recipe.Schedule"}, "Recipe.Schedule auto: ssd does not train in epochs"},
		{"auto without proxies", with(func(s *unlearn.Spec) { s.Recipe.Schedule, s.Recipe.NoProxies = "auto", true }),
			[]string{"Recipe.Schedule", "Recipe.NoProxies", "Recipe.NoProxies"}, "stops on the proxies"},
		{"max epochs when fixed", with(func(s *unlearn.Spec) {
			s.Recipe.MaxEpochs, s.Recipe.LR = unlearn.Some(3), unlearn.Some(0.01) // a rate makes the schedule fixed
		}), []string{"Recipe.MaxEpochs", "Recipe.Schedule", "Recipe.Epochs"}, "Recipe.MaxEpochs applies to"},
		{"zero tolerance when fixed", with(func(s *unlearn.Spec) {
			s.Recipe.Schedule, s.Recipe.UtilityTolerance = "fixed", unlearn.Some(0.0)
		}), []string{"Recipe.UtilityTolerance", "Recipe.Schedule"}, "applies to Recipe.Schedule auto"},
		{"tolerance 1", with(func(s *unlearn.Spec) { s.Recipe.ForgetTolerance = unlearn.Some(1.0) }),
			[]string{"Recipe.ForgetTolerance"}, "Recipe.ForgetTolerance 1: must be a fraction in [0, 1)"},
		{"cosine for rft", with(func(s *unlearn.Spec) { s.Recipe.Schedule = unlearn.TrainCosine }),
			[]string{"Recipe.Schedule", "Method"}, "apply to Method retrain"},
	} {
		err := c.spec.Validate()
		if err == nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if got := fieldsOf(err); !slices.Equal(got, c.fields) {
			t.Errorf("%s: %v names fields %q, want %q", c.name, err, got, c.fields)
		}
		if !strings.Contains(err.Error(), c.text) || strings.Contains(err.Error(), "--") {
			t.Errorf("%s: %q, want it to contain %q and no flag", c.name, err, c.text)
		}
	}
}

// TestSpecJob: an empty choice is the recommended default; a method or
// strategy chosen drops the depth floor; a recipe given makes the schedule
// fixed; the rest of the Spec reaches the Job and its Config.
func TestSpecJob(t *testing.T) {
	s := unlearn.Spec{ModelPath: "m.onnx", ForgetPath: "f.txt", BatchSize: 64, Seed: 7, NoMIA: true}
	j, err := s.Job()
	r := unlearn.Recommended
	if err != nil || j.Method != r.Method || j.Budget != r.Budget || j.DepthFloor != r.DepthFloor ||
		j.Config.Schedule != r.Schedule || j.Config.BatchSize != 64 || j.Config.Seed != 7 || !j.Config.Proxies.NoMIA {
		t.Errorf("the default: %+v (%v)", j, err)
	}
	s.Method = unlearn.Some("del")
	if j, err := s.Job(); err != nil || j.DepthFloor != 0 {
		t.Errorf("method del chosen: depth floor %g (%v), want 0", j.DepthFloor, err)
	}
	s.Recipe.Epochs = unlearn.Some(0) // given, even at its default value
	if j, err := s.Job(); err != nil || j.Config.Schedule == unlearn.ScheduleAuto || j.Config.Epochs == 0 {
		t.Errorf("epochs given: %q, %d epochs (%v); want fixed at the default", j.Config.Schedule, j.Config.Epochs, err)
	}
}
