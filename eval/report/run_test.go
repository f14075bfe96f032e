package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// TestRunSummaryAndResult: what the main command prints and logs after a
// run comes from the report alone: the audit counts, the cost said plainly
// when retraining would have been cheaper and what the estimate rests on,
// the auto schedule's choice and the files (not the notes); the JSON result has
// the documented fields.
func TestRunSummaryAndResult(t *testing.T) {
	rep := oracleReport(t)
	rep.Model.Path = "u.onnx"
	rep.Unlearning = &schema.Unlearning{
		Audit:            &schema.Audit{ChangedParams: 50, TotalParams: 200, BitIdentical: true, Changed: make([]schema.TensorChange, 3)},
		Timings:          schema.UnlearningTimings{LocalizeS: 1, UnlearnS: 9, RetrainTimingS: 1.24},
		RetrainEstimateS: 5, RetrainEpochs: 8, Speedup: 0.5, EpochsEquivalent: 16, EpochsTrained: 14.1,
		RetrainEstimateBasis: schema.RetrainBasisTimed, RetrainStepS: 0.1, RetrainStepsTimed: 6,
		Auto:  &schema.AutoSchedule{LR: 0.3, StopEpoch: 13, Epoch: 10, MaxEpochs: 20, Reason: "no-progress", RangeTest: make([]schema.LRTrial, 5)},
		Notes: []string{"warning: something"},
		Flags: []schema.Flag{{Kind: schema.FlagRuleNotMet, Text: "warning: something"}},
	}
	var b bytes.Buffer
	if err := WriteRunSummary(&b, rep, "u.metrics.json", "u.html"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"wrote u.onnx: 50 of 200 parameters changed (25.0%) in 3 tensors",
		"time: localize 1.0 s, unlearn 9.0 s (16.0 epochs over the retain set at this run's speed; 14.1 by examples trained); retraining from scratch (8 epochs) would take about 5 s (timed: 6 full training steps, 1.2 s), so this run cost 2.0× retraining",
		"auto schedule: lr 0.3 (from a range test over 5 rates), stopped after epoch 13 of at most 20 (no-progress); the result is epoch 10",
		"wrote u.metrics.json and u.html",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
		}
	}
	// Warnings and the verdict are the log's (stderr), not the summary's.
	for _, not := range []string{"warning", "verdict"} {
		if strings.Contains(b.String(), not) {
			t.Errorf("summary (stdout) has a %s:\n%s", not, b.String())
		}
	}
	for basis, want := range map[string]string{schema.RetrainBasisRun: "this run's own training", "": ""} {
		if got := RetrainBasis(&schema.Unlearning{RetrainEstimateBasis: basis}); got != want {
			t.Errorf("basis %q: %q, want %q", basis, got, want)
		}
	}
	fields := map[string]any{}
	res := RunResult(rep, "u.metrics.json", "")
	for i := 0; i+1 < len(res); i += 2 {
		fields[res[i].(string)] = res[i+1]
	}
	for _, k := range []string{"out", "metrics", "accuracy", "changed_params", "total_params", "outside_mask_bit_identical",
		"timings", "oracle_accuracy", "avg_gap", "retrain_estimate_s", "speedup", "auto", "vouched", "flags"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("result lacks %q", k)
		}
	}
	if _, ok := fields["report"]; ok || fields["out"] != "u.onnx" {
		t.Errorf("result: report %v, out %v", fields["report"], fields["out"])
	}
}

// The verdict line: vouched for only with the rule met and no flag (with
// the estimate's numbers when there is one), not vouched for with the
// flags' kinds, and nothing for a fixed recipe without flags.
func TestVerdictLine(t *testing.T) {
	p := &schema.ProxyLog{Estimate: &schema.OracleEstimate{TestAccuracy: 0.883, ReferenceAccuracy: 0.852}}
	p.After.ForgetAccuracy, p.After.TestAccuracy = 0.8525, 0.881
	for _, c := range []struct {
		u    schema.Unlearning
		want string
	}{
		{schema.Unlearning{Vouched: true, Auto: &schema.AutoSchedule{}, Proxies: p},
			"verdict: vouched for: the auto schedule met its conditions and no signal disagrees (forget accuracy 85.25%, oracle estimate 85.20%; test accuracy 88.10%, oracle estimate 88.30%)"},
		{schema.Unlearning{Auto: &schema.AutoSchedule{}, Flags: []schema.Flag{{Kind: schema.FlagEstimateBias}, {Kind: schema.FlagTestDrop}}},
			"verdict: NOT vouched for (estimate-bias, test-drop): check the result"},
		{schema.Unlearning{Auto: &schema.AutoSchedule{}}, "verdict: NOT vouched for: the auto schedule did not meet its conditions"},
		{schema.Unlearning{}, ""},
		{schema.Unlearning{Vouched: true, Auto: &schema.AutoSchedule{}, Proxies: p, Tolerances: &schema.Tolerances{Forget: 0.0245,
			Test: 0.0168, ForgetExamples: 600, TestExamples: 2000, Resolved: true, Cap: 0.05}},
			"verdict: vouched for: forget accuracy within ±2.5 points of an oracle's and test accuracy within ±1.7 (what 600 forget and 2000 test examples resolve"},
		{schema.Unlearning{Auto: &schema.AutoSchedule{}, Flags: []schema.Flag{{Kind: schema.FlagForgetResolution}},
			Tolerances: &schema.Tolerances{Forget: 0.058, ForgetExamples: 120, Cap: 0.05}},
			"verdict: none: 120 forget examples cannot resolve the ±5 points a verdict may claim"},
	} {
		if got := VerdictLine(&c.u); !strings.HasPrefix(got, c.want) || (c.want == "" && got != "") {
			t.Errorf("%+v: %q, want %q", c.u, got, c.want)
		}
	}
}

// TestMessages: a run's log about its result is its notes (one already
// written is left out), each flag's warning as one short line naming its
// kind with the whole text in the event's fields, other warnings wrapped, and
// the verdict last with vouched, flags and reason matching the report.
func TestMessages(t *testing.T) {
	long := "warning: " + strings.Repeat("a long warning that goes on ", 20)
	longNote := strings.Repeat("a long note ", 20)
	bias := "warning: the forget set thins classes [2 5] " + strings.Repeat("and more detail ", 40)
	rep := &schema.Report{Settings: schema.Settings{MIA: &schema.MIASettings{Notes: []string{"an SVC stopped at its cap"}}},
		Unlearning: &schema.Unlearning{
			Auto:  &schema.AutoSchedule{Reason: "unseen-and-recovered"},
			Notes: []string{"the batch was made symbolic", longNote, long, bias},
			Flags: []schema.Flag{{Kind: schema.FlagEstimateBias, Text: bias}},
		}}
	said := func(n string) bool { return n == "the batch was made symbolic" }
	ms := Messages(rep, said)
	var events []string
	for _, m := range ms {
		events = append(events, m.Event)
		if first, _, _ := strings.Cut(m.Text, "\n"); m.Event != "note" && len(first) > 120 {
			t.Errorf("%s: first line of %d bytes: %q", m.Event, len(first), first)
		}
		for _, rest := range strings.Split(m.Text, "\n")[1:] {
			if !strings.HasPrefix(rest, "  ") {
				t.Errorf("%s: a following line is not indented: %q", m.Event, rest)
			}
		}
	}
	if got := strings.Join(events, " "); got != "note note warning warning verdict" {
		t.Fatalf("events %q, want note note warning warning verdict (the note already said left out)", got)
	}
	field := func(m Message, k string) any {
		for i := 0; i+1 < len(m.Fields); i += 2 {
			if m.Fields[i] == k {
				return m.Fields[i+1]
			}
		}
		return nil
	}
	if w := ms[3]; !strings.HasPrefix(w.Text, "warning [estimate-bias]: ") || strings.Contains(w.Text, "\n") ||
		field(w, "flag") != schema.FlagEstimateBias || field(w, "msg") != strings.TrimPrefix(bias, "warning: ") {
		t.Errorf("flag warning %q, fields %v", w.Text, w.Fields)
	}
	if w := ms[2]; strings.Join(strings.Fields(w.Text), " ") != strings.Join(strings.Fields(long), " ") {
		t.Errorf("a wrapped warning lost words: %q", w.Text)
	}
	v := ms[4]
	if field(v, "vouched") != false || !slices.Equal(field(v, "flags").([]string), []string{"estimate-bias"}) ||
		field(v, "reason") != "estimate-bias" || !strings.HasPrefix(v.Text, "verdict: NOT vouched for") {
		t.Errorf("verdict %q, fields %v", v.Text, v.Fields)
	}
	for k := range flagKindsDocumented() {
		if flagHeadlines[k] == "" {
			t.Errorf("flag %s has no headline", k)
		}
	}
}

// flagKindsDocumented is every flag kind schema declares.
func flagKindsDocumented() map[string]bool {
	return map[string]bool{schema.FlagRuleNotMet: true, schema.FlagProxiesDisagree: true, schema.FlagTestDrop: true,
		schema.FlagEstimateBias: true, schema.FlagForgetResolution: true, schema.FlagStillRemembers: true}
}

// TestSummarize: the summary block agrees with the verdict (vouched, the
// flags' kinds, the exit status --strict implies), states the rule's
// tolerances or the verdict's where it has them, and carries the accuracies
// before and after and the oracle estimate; an evaluation has none.
func TestSummarize(t *testing.T) {
	fg, fgBefore := 0.785, 0.8925
	est := &schema.OracleEstimate{ReferenceAccuracy: 0.7764, TestAccuracy: 0.841}
	rep := &schema.Report{Metrics: &schema.Metrics{Accuracy: schema.Accuracies{Test: 0.839, Forget: &fg}},
		Before: &schema.Section{Metrics: &schema.Metrics{Accuracy: schema.Accuracies{Test: 0.841, Forget: &fgBefore}}},
		Unlearning: &schema.Unlearning{
			Auto:    &schema.AutoSchedule{Reason: "unseen-and-recovered", ForgetTolerance: 0.01, UtilityTolerance: 0.005},
			Proxies: &schema.ProxyLog{Estimate: est},
			Flags:   []schema.Flag{{Kind: schema.FlagEstimateBias, Text: "warning: x"}},
		}}
	s := Summarize(rep)
	if s.Vouched || !slices.Equal(s.Flags, []string{"estimate-bias"}) || s.StrictExitCode != schema.ExitNotVouched ||
		*s.ForgetTolerance != 0.01 || *s.TestTolerance != 0.005 || *s.ForgetAccuracy != fg || s.TestAccuracy != 0.839 ||
		*s.ForgetAccuracyBefore != fgBefore || *s.TestAccuracyBefore != 0.841 || *s.OracleEstimateForget != 0.7764 ||
		*s.OracleEstimateTest != 0.841 {
		t.Errorf("not vouched: %+v", s)
	}
	if (NotVouchedReason(rep.Unlearning) != "") != (s.StrictExitCode != 0) {
		t.Error("the summary's exit status disagrees with --strict's reason")
	}
	rep.Unlearning.Flags, rep.Unlearning.Vouched = nil, true
	rep.Unlearning.Tolerances = &schema.Tolerances{Forget: 0.03, Test: 0.02}
	s = Summarize(rep)
	if !s.Vouched || len(s.Flags) != 0 || s.Flags == nil || s.StrictExitCode != 0 || *s.ForgetTolerance != 0.03 ||
		*s.TestTolerance != 0.02 {
		t.Errorf("vouched: %+v", s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"vouched":true`, `"flags":[]`, `"strict_exit_code":0`, `"oracle_estimate_forget_accuracy"`,
		`"forget_accuracy_before"`, `"forget_tolerance"`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("summary JSON lacks %s: %s", k, b)
		}
	}
	fixed := &schema.Report{Metrics: rep.Metrics, Unlearning: &schema.Unlearning{}}
	if s := Summarize(fixed); s.StrictExitCode != schema.ExitNotVouched || s.ForgetTolerance != nil {
		t.Errorf("a fixed recipe: %+v", s)
	}
	if Summarize(&schema.Report{}) != nil {
		t.Error("an evaluation has a summary")
	}
}
