package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/schema"
)

// RunResult returns the fields of the main command's JSON "result" event
// (docs/PIPELINES.md) for the report of an unlearning run, rep.Model.Path
// being the unlearned model and metrics and html the files written beside
// it (html "" when none).
func RunResult(rep *schema.Report, metrics, html string) []any {
	u, a := rep.Unlearning, rep.Unlearning.Audit
	res := []any{"out", rep.Model.Path, "metrics", metrics, "accuracy", rep.Accuracy,
		"changed_params", a.ChangedParams, "total_params", a.TotalParams,
		"outside_mask_bit_identical", a.BitIdentical, "timings", u.Timings}
	if html != "" {
		res = append(res, "report", html)
	}
	if rep.Before != nil {
		res = append(res, "before_accuracy", rep.Before.Accuracy)
	}
	if rep.Oracle != nil {
		res = append(res, "oracle_accuracy", rep.Oracle.Accuracy, "avg_gap", rep.Delta.AvgGap)
	}
	if rep.MIA != nil {
		res = append(res, "mia", rep.MIA)
	}
	if u.RetrainEstimateS > 0 {
		res = append(res, "retrain_estimate_s", u.RetrainEstimateS, "speedup", u.Speedup)
	}
	if u.Proxies != nil {
		res = append(res, "proxies", u.Proxies.After)
	}
	if s := u.Auto; s != nil {
		res = append(res, "auto", map[string]any{"lr": s.LR, "stop_epoch": s.StopEpoch, "epoch": s.Epoch,
			"max_epochs": s.MaxEpochs, "reason": s.Reason})
	}
	kinds := []string{}
	for _, f := range u.Flags {
		kinds = append(kinds, f.Kind)
	}
	return append(res, "vouched", u.Vouched, "flags", kinds)
}

// VerdictLine says whether the run's own signals back its result: the
// last line of the run's log, so that a user who reads one line reads
// this one. "" for a run without the auto schedule and without flags (a
// fixed recipe has no rule to meet; its warnings, if any, are above).
func VerdictLine(u *schema.Unlearning) string {
	switch {
	case u.Vouched && u.Tolerances != nil:
		t := u.Tolerances
		return fmt.Sprintf("verdict: vouched for: forget accuracy within ±%.1f points of an oracle's and test accuracy "+
			"within ±%.1f (what %d forget and %d test examples resolve; the auto schedule met its conditions and no "+
			"signal disagrees)", 100*t.Forget, 100*t.Test, t.ForgetExamples, t.TestExamples)
	case u.Tolerances != nil && !u.Tolerances.Resolved:
		return fmt.Sprintf("verdict: none: %d forget examples cannot resolve the ±%g points a verdict may claim; "+
			"check the numbers above against an oracle", u.Tolerances.ForgetExamples, 100*u.Tolerances.Cap)
	case u.Vouched:
		s := "verdict: vouched for: the auto schedule met its conditions and no signal disagrees"
		if p := u.Proxies; p != nil && p.Estimate != nil {
			s += fmt.Sprintf(" (forget accuracy %.2f%%, oracle estimate %.2f%%; test accuracy %.2f%%, oracle estimate %.2f%%)",
				100*p.After.ForgetAccuracy, 100*p.Estimate.ReferenceAccuracy, 100*p.After.TestAccuracy, 100*p.Estimate.TestAccuracy)
		}
		return s
	case len(u.Flags) > 0:
		kinds := make([]string, len(u.Flags))
		for i, f := range u.Flags {
			kinds[i] = f.Kind
		}
		return fmt.Sprintf("verdict: NOT vouched for (%s): check the result against an oracle; metrics.json's "+
			"flags say why", strings.Join(kinds, ", "))
	case u.Auto != nil:
		return "verdict: NOT vouched for: the auto schedule did not meet its conditions"
	}
	return ""
}

// NotVouchedReason says in a few words why a run is not vouched for (the
// flags' kinds, or what stands in for them), "" when it is: what
// --strict's exit says.
func NotVouchedReason(u *schema.Unlearning) string {
	kinds := make([]string, len(u.Flags))
	for i, f := range u.Flags {
		kinds[i] = f.Kind
	}
	switch {
	case u.Vouched:
		return ""
	case len(kinds) > 0:
		return strings.Join(kinds, ", ")
	case u.Auto == nil:
		return "a fixed recipe: only the auto schedule's rule can vouch for a result"
	}
	return "the auto schedule did not meet its conditions"
}

// EpochsEquivalent says a run's cost in epochs over the retain set, by
// seconds at its own training speed and by examples trained.
func EpochsEquivalent(u *schema.Unlearning) string {
	return fmt.Sprintf("%.1f epochs over the retain set at this run's speed; %.1f by examples trained",
		u.EpochsEquivalent, u.EpochsTrained)
}

// RetrainBasis says what a run's estimate of retraining rests on
// (u.RetrainEstimateBasis): "timed: 6 full training steps, 1.2 s" (the
// steps and what timing them took), "this run's own training" (the run
// retrained), or "" (no basis recorded).
func RetrainBasis(u *schema.Unlearning) string {
	switch u.RetrainEstimateBasis {
	case schema.RetrainBasisTimed:
		return fmt.Sprintf("timed: %d full training steps, %.1f s", u.RetrainStepsTimed, u.Timings.RetrainTimingS)
	case schema.RetrainBasisRun:
		return "this run's own training"
	}
	return ""
}

// RetrainEpochsFrom names where the epochs of the retraining estimate came
// from (Unlearning.RetrainEpochsFrom) for the text: the retrain-epochs
// setting, or the model's metadata key.
func RetrainEpochsFrom(from string) setting.Message {
	if from == schema.RetrainEpochsMetadata {
		return setting.Msgf("the model's %s metadata", data.MetaTrainEpochs)
	}
	return setting.Msgf("%s", setting.Of("retrain-epochs"))
}

// retrainEpochs is "N epochs", with where N came from when the model's
// metadata gave it (the user knows what they typed).
func retrainEpochs(u *schema.Unlearning) string {
	s := textio.Count(u.RetrainEpochs, "epoch")
	if u.RetrainEpochsFrom == schema.RetrainEpochsMetadata {
		s += ", from " + RetrainEpochsFrom(u.RetrainEpochsFrom).String()
	}
	return s
}

// WriteRunSummary writes what the main command prints on stdout after the
// metrics table: the changed parameters, the time against the retraining
// estimate (saying so plainly when retraining would have been cheaper), the
// auto schedule's choice, the proxies and the files written. The run's
// notes, warnings and verdict are its log's (Messages), on stderr.
// It returns the writer's first error.
func WriteRunSummary(w io.Writer, rep *schema.Report, metrics, html string) error {
	ew := &textio.ErrWriter{W: w}
	u, a := rep.Unlearning, rep.Unlearning.Audit
	tm := u.Timings
	except := ""
	if a.FoldedStatistics > 0 {
		except = fmt.Sprintf(" except %d convolution weights and biases outside the mask that carry their "+
			"channels' updated normalization statistics (BatchNormalization restored for the run and folded back)",
			a.FoldedStatistics)
	}
	fmt.Fprintf(ew, "\nwrote %s: %d of %d parameters changed (%.1f%%) in %d tensors; "+
		"every other parameter bit-identical%s\n", rep.Model.Path, a.ChangedParams, a.TotalParams,
		100*float64(a.ChangedParams)/float64(a.TotalParams), len(a.Changed), except)
	fmt.Fprintf(ew, "time: localize %.1f s, unlearn %.1f s", tm.LocalizeS, tm.UnlearnS)
	if u.EpochsEquivalent > 0 {
		fmt.Fprintf(ew, " (%s)", EpochsEquivalent(u))
	}
	if u.RetrainEstimateS > 0 {
		fmt.Fprintf(ew, "; retraining from scratch (%s) would take about %.0f s", retrainEpochs(u), u.RetrainEstimateS)
		if b := RetrainBasis(u); b != "" {
			fmt.Fprintf(ew, " (%s)", b)
		}
		fmt.Fprint(ew, ", ")
		fmt.Fprint(ew, cost(u.Speedup))
	}
	fmt.Fprintln(ew)
	if s := u.Auto; s != nil {
		how := "as given"
		if len(s.RangeTest) > 0 {
			how = fmt.Sprintf("from a range test over %d rates", len(s.RangeTest))
		}
		result := ""
		if s.Epoch != s.StopEpoch {
			result = fmt.Sprintf("; the result is epoch %d, the closest to the rule", s.Epoch)
		}
		fmt.Fprintf(ew, "auto schedule: lr %.4g (%s), stopped after epoch %d of at most %d (%s)%s\n",
			s.LR, how, s.StopEpoch, s.MaxEpochs, s.Reason, result)
	}
	if p := u.Proxies; p != nil {
		fmt.Fprintln(ew, ProxiesLine(p))
	}
	if metrics == "-" {
		fmt.Fprintf(ew, "wrote metrics.json to stdout")
	} else {
		fmt.Fprintf(ew, "wrote %s", metrics)
	}
	if html != "" {
		fmt.Fprintf(ew, " and %s", html)
	}
	fmt.Fprintln(ew)
	return ew.Err
}

// Message is one line of a run's log about its result (a note, a warning or
// the verdict) as its JSON event gives it: the event's name, the text a
// text log prints and the event's fields (pairs of key, value), msg, the
// whole message, among them.
type Message struct {
	Event  string
	Text   string
	Fields []any
}

// flagHeadlines says each flag's warning in one short line: what is wrong
// and what to do. The whole text is in metrics.json (unlearning.flags) and
// in the warning's JSON event.
var flagHeadlines = map[string]string{
	schema.FlagRuleNotMet:       "the auto schedule stopped without meeting its rule; compare with an oracle",
	schema.FlagProxiesDisagree:  "the proxies disagree with the rule's stop; compare with an oracle",
	schema.FlagTestDrop:         "test accuracy fell more than 5 points; the flag's text says which recipe to change",
	schema.FlagEstimateBias:     "the forget set thins classes, so the oracle estimate runs high; compare with an oracle",
	schema.FlagForgetResolution: "too few forget examples to resolve a verdict's tolerance; compare with an oracle",
	schema.FlagStillRemembers:   "the forget set still looks remembered at the widest budget; the flag says what to do",
}

// lineWidth is where a long warning or verdict is wrapped (in bytes): its
// first line says what, the rest follow indented.
const lineWidth = 120

// Messages returns an unlearning run's notes, warnings and verdict, in
// that order, as its log writes them: the evaluation's notes, the run's
// notes (those said gives as already written are left out, so that no note
// is written twice), each flag's warning as its short headline with the
// kind, other warnings wrapped, and the verdict last (absent for
// a fixed recipe without flags, as VerdictLine).
func Messages(rep *schema.Report, said func(note string) bool) []Message {
	var out []Message
	note := func(n string) {
		if said != nil && said(n) {
			return
		}
		if w, ok := strings.CutPrefix(n, "warning: "); ok {
			out = append(out, Message{"warning", Wrap("warning: "+w, lineWidth), []any{"msg", w}})
			return
		}
		out = append(out, Message{"note", "note: " + n, []any{"msg", n}})
	}
	if s := rep.Settings.MIA; s != nil {
		for _, n := range s.Notes {
			note(n)
		}
	}
	u := rep.Unlearning
	if u == nil {
		return out
	}
	kinds := map[string]string{}
	for _, f := range u.Flags {
		kinds[f.Text] = f.Kind
	}
	for _, n := range u.Notes {
		k, ok := kinds[n]
		if !ok {
			note(n)
			continue
		}
		head := flagHeadlines[k]
		if head == "" {
			head = "see the flag's text in metrics.json"
		}
		out = append(out, Message{"warning", "warning [" + k + "]: " + head,
			[]any{"msg", strings.TrimPrefix(n, "warning: "), "flag", k}})
	}
	if v := VerdictLine(u); v != "" {
		out = append(out, Message{"verdict", Wrap(v, lineWidth), []any{"msg", strings.TrimPrefix(v, "verdict: "),
			"vouched", u.Vouched, "flags", flagKinds(u), "reason", NotVouchedReason(u)}})
	}
	return out
}

// flagKinds is the kinds of u's flags, [] for none.
func flagKinds(u *schema.Unlearning) []string {
	kinds := []string{}
	for _, f := range u.Flags {
		kinds = append(kinds, f.Kind)
	}
	return kinds
}

// Wrap breaks s into lines of at most width bytes where it can, the
// lines after the first indented by two spaces (textio.Wrap).
func Wrap(s string, width int) string { return textio.Wrap(s, width, "  ") }

// Summarize is rep's summary block (schema.Summary) from its unlearning
// section, nil for a report without one (an evaluation).
func Summarize(rep *schema.Report) *schema.Summary {
	u := rep.Unlearning
	if u == nil {
		return nil
	}
	f := func(v float64) *float64 { return &v }
	s := &schema.Summary{Vouched: u.Vouched, Flags: flagKinds(u)}
	switch {
	case u.Tolerances != nil:
		s.ForgetTolerance, s.TestTolerance = f(u.Tolerances.Forget), f(u.Tolerances.Test)
	case u.Auto != nil:
		s.ForgetTolerance, s.TestTolerance = f(u.Auto.ForgetTolerance), f(u.Auto.UtilityTolerance)
	}
	if rep.Metrics != nil {
		s.ForgetAccuracy, s.TestAccuracy = rep.Accuracy.Forget, rep.Accuracy.Test
	}
	if b := rep.Before; b != nil && b.Metrics != nil {
		s.ForgetAccuracyBefore, s.TestAccuracyBefore = b.Accuracy.Forget, f(b.Accuracy.Test)
	}
	if p := u.Proxies; p != nil && p.Estimate != nil {
		s.OracleEstimateForget, s.OracleEstimateTest = f(p.Estimate.ReferenceAccuracy), f(p.Estimate.TestAccuracy)
	}
	if NotVouchedReason(u) != "" {
		s.StrictExitCode = schema.ExitNotVouched
	}
	return s
}

// Log writes rep's Messages through info (event, text, fields): the
// log about an evaluation's or a run's result.
func Log(rep *schema.Report, info func(event, text string, fields ...any)) {
	for _, m := range Messages(rep, nil) {
		info(m.Event, m.Text, m.Fields...)
	}
}
