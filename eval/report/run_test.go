package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// TestRunSummaryAndResult: what the main command prints and logs after a
// run comes from the report alone: the audit counts, the cost said plainly
// when retraining would have been cheaper and what the estimate rests on,
// the auto schedule's choice, the notes and the files; the JSON result has
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
		"\nwarning: something\n",
		"\nverdict: NOT vouched for (rule-not-met, see the warnings above)",
		"wrote u.metrics.json and u.html",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, b.String())
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
			"verdict: NOT vouched for (estimate-bias, test-drop, see the warnings above)"},
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
