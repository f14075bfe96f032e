package unlearn

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/cmd/unlearn/flagtext"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// A result more than MaxTestDrop below the input's test accuracy gets a
// warning with both numbers; within it, or with nothing to compare, none.
func TestTestDropNote(t *testing.T) {
	met := func(test float64) *eval.Metrics {
		return &eval.Metrics{Metrics: schema.Metrics{Accuracy: schema.Accuracies{Test: test}}}
	}
	n := dropNote(met(0.760), met(0.573), nil)
	for _, want := range []string{"warning: ", "76.00%", "57.30%", "18.7 points"} {
		if !strings.Contains(n, want) {
			t.Errorf("note %q lacks %q", n, want)
		}
	}
	if n := dropNote(met(0.841), met(0.814), nil); n != "" {
		t.Errorf("a 2.7-point drop (the demo's): %q", n)
	}
	if n := dropNote(nil, met(0.5), nil); n != "" {
		t.Errorf("no input accuracy: %q", n)
	}
	pl := &schema.ProxyLog{}
	pl.Before.TestAccuracy = 0.9
	if n := dropNote(nil, met(0.8), pl); !strings.Contains(n, "90.00%") {
		t.Errorf("from the proxies' baseline: %q", n)
	}
	// A class removed entirely: the oracle estimate's 80.3 % is the level,
	// not the input's 89.2 % (the suite's small ResNet: 81.8 % is no damage).
	pl.Estimate = &schema.OracleEstimate{TestAccuracy: 0.803}
	if n := dropNote(met(0.892), met(0.818), pl); n != "" {
		t.Errorf("a class's share lost, no more: %q", n)
	}
	if n := dropNote(met(0.892), met(0.70), pl); !strings.Contains(n, "10.3 points below the 80.30% an oracle is estimated to score") {
		t.Errorf("damage beyond the estimate: %q", n)
	}
	// An estimate above the input's (a rounding of the shift) never raises the bar.
	pl.Estimate.TestAccuracy = 0.95
	if n := dropNote(met(0.9), met(0.86), pl); n != "" {
		t.Errorf("a 4-point drop with an estimate above the input: %q", n)
	}
}

// A recipe note says how long the run trained: the fixed recipe's epochs,
// or what the auto schedule trained (and its result epoch when it differs),
// at the rate actually used.
func TestTrainedFor(t *testing.T) {
	r := &Runner{cfg: Config{Epochs: 1, LR: 0.1}, res: &Result{}}
	if got := r.TrainedFor(); got != "for 1 epoch" || r.Rate() != 0.1 {
		t.Errorf("fixed: %q, lr %g", got, r.Rate())
	}
	r.cfg.Epochs = 20
	r.res.Auto = &schema.AutoSchedule{StopEpoch: 16, Epoch: 13, MaxEpochs: 20, LR: 0.3}
	if got := r.TrainedFor(); got != "for 16 epochs (auto schedule, at most 20), the result being epoch 13's state" || r.Rate() != 0.3 {
		t.Errorf("auto: %q, lr %g", got, r.Rate())
	}
	r.NoteAfter(func() string { return "finetuned " + r.TrainedFor() })
	r.Note("after")
	if len(r.res.Notes) != 2 || r.res.Notes[0].String() != "" || r.later[0].i != 0 {
		t.Errorf("notes %q, later %v", r.res.Notes, r.later)
	}
}

// verdictWarnings: an auto run that stopped without meeting its
// conditions is flagged with the rule's detail; one that met them is not;
// forget accuracy at the reference with a proxy MIA far from the
// reference's verdict is flagged as a disagreement, within
// MIADisagreement it is not.
func TestVerdictWarnings(t *testing.T) {
	u := &schema.Unlearning{Auto: &schema.AutoSchedule{Reason: autorule.StopNoProgress, MaxEpochs: 20, ForgetTolerance: 0.01,
		Detail: "epoch 13: no closer to the conditions for 3 epochs (test accuracy 0.814 vs target 0.841)"}}
	w := verdictFlags(u, false, 400)
	if len(w) != 1 || w[0].Kind != schema.FlagRuleNotMet || !strings.HasPrefix(w[0].Text, "warning: the auto schedule stopped for lack of progress without meeting its conditions") || !strings.Contains(w[0].Text, "0.814 vs target 0.841") {
		t.Errorf("no progress: %q", w)
	}
	u.Auto.Reason = autorule.StopMaxEpochs
	if w := verdictFlags(u, true, 400); len(w) != 1 || !strings.Contains(w[0].Text, "reached its cap of 20 epochs") || !strings.Contains(w[0].Text, "the oracle's column above is the check") {
		t.Errorf("cap: %q", w)
	}
	u.Auto.Reason = autorule.StopUnseen
	if w := verdictFlags(u, false, 400); len(w) != 0 {
		t.Errorf("rule met: %q", w)
	}
	p := &schema.ProxyLog{}
	p.After = schema.Proxies{ForgetAccuracy: 0.64, ReferenceAccuracy: 0.648, ForgetGap: -0.008,
		MIA: &schema.ProxyMIA{Feature: "confidence", Forget: 0.913, Reference: 0.618}}
	u.Proxies = p
	w = verdictFlags(u, false, 20000)
	if len(w) != 1 || w[0].Kind != schema.FlagProxiesDisagree || !strings.Contains(w[0].Text, "the proxies disagree") || !strings.Contains(w[0].Text, "91.30%") || !strings.Contains(w[0].Text, "61.80%") {
		t.Errorf("disagreement (the issue's user model): %q", w)
	}
	p.After.MIA.Forget = 0.70
	if w := verdictFlags(u, false, 20000); len(w) != 0 {
		t.Errorf("8 points apart: %q", w)
	}
	p.After.MIA.Forget, p.After.ForgetGap = 0.913, 0.05
	if w := verdictFlags(u, false, 20000); len(w) != 0 {
		t.Errorf("forget condition not met (remembered): %q", w)
	}
	// A forget set that thins classes: the estimate is an upper bound, the
	// run cannot vouch; one that removes a class entirely, or none, can.
	// Whatever the classes keep: the bias was measured at 3,000 too.
	for _, kept := range []int{200, 3000, 50000} {
		p.Estimate = &schema.OracleEstimate{Partial: []int{2, 5}, PartialKept: kept, ReferenceAccuracy: 0.776}
		w = verdictFlags(u, true, 400)
		if len(w) != 1 || w[0].Kind != schema.FlagEstimateBias || !strings.Contains(w[0].Text, "classes [2 5]") ||
			!strings.Contains(w[0].Text, "77.60%") || !strings.Contains(w[0].Text, "keeps "+thousands(kept)+" training") {
			t.Errorf("thinned classes keeping %d: %q", kept, w)
		}
		for _, b := range EstimateBias {
			if !strings.Contains(w[0].Text, fmt.Sprintf("%.1f to %.1f points where they kept %s examples", b.Min, b.Max, thousands(b.Kept))) {
				t.Errorf("the warning does not quote the range measured at %d kept: %q", b.Kept, w[0].Text)
			}
		}
	}
	p.Estimate = &schema.OracleEstimate{Removed: []int{2}}
	if w := verdictFlags(u, false, 400); len(w) != 0 {
		t.Errorf("a class removed entirely: %q", w)
	}
	// 40 forget examples: one is 2.5 points, the run cannot vouch for a point.
	p.Reference = &schema.ProxyReference{NTest: 1000}
	if w := verdictFlags(u, false, 40); len(w) != 1 || w[0].Kind != schema.FlagForgetResolution || !strings.Contains(w[0].Text, "one of them is 2.5 points") {
		t.Errorf("40 forget examples: %q", w)
	}
	if w := verdictFlags(u, false, 100); len(w) != 0 {
		t.Errorf("100 forget examples, a class removed: %q", w)
	}
	// 600 IID examples near 92.5 %: an oracle's forget accuracy scatters
	// by ±2.2 points (the realistic regime's 1 % set, where a vouched run
	// missed by 1.5); 6,000 near 90 %: ±0.8, the run may vouch.
	p.Estimate = &schema.OracleEstimate{ReferenceAccuracy: 0.925}
	if w := verdictFlags(u, false, 600); len(w) != 1 || w[0].Kind != schema.FlagForgetResolution ||
		!strings.Contains(w[0].Text, "has 600 examples") || !strings.Contains(w[0].Text, "±2.2 points") || !strings.Contains(w[0].Text, "92.50%") {
		t.Errorf("600 IID forget examples: %q", w)
	}
	p.Estimate.ReferenceAccuracy = 0.9
	if w := verdictFlags(u, false, 6000); len(w) != 0 {
		t.Errorf("6,000 IID forget examples: %q", w)
	}
	// Without an estimate the model's own reference accuracy is the level.
	p.Estimate = nil
	if w := verdictFlags(u, false, 1000); len(w) != 1 || w[0].Kind != schema.FlagForgetResolution || !strings.Contains(w[0].Text, "near 64.80%") {
		t.Errorf("1,000 forget examples, no estimate: %q", w)
	}
}

// autorule.ForgetSpread against the binomial standard error computed by hand.
func TestForgetSpread(t *testing.T) {
	for _, c := range []struct {
		acc  float64
		n    int
		want float64
	}{{0.925, 600, 0.021506}, {0.9, 6000, 0.0077460}, {0.5, 100, 0.1}, {0, 400, 0}, {1, 400, 0}, {0.9, 0, 0}} {
		if got := autorule.ForgetSpread(c.acc, c.n); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("autorule.ForgetSpread(%g, %d) = %.7f, want %.7f", c.acc, c.n, got, c.want)
		}
	}
}

// dropNote is testDropNote with the fixed recipe's advice, as the command
// words it, or "".
func dropNote(before, after *eval.Metrics, proxies *schema.ProxyLog) string {
	if n := testDropNote(before, after, proxies, testDropAdvice); n != nil {
		return flagtext.Note(*n)
	}
	return ""
}

// verdictFlags is verdictWarnings as metrics.json records them for the
// command.
func verdictFlags(u *schema.Unlearning, oracle bool, nForget int) []schema.Flag {
	var out []schema.Flag
	for _, f := range verdictWarnings(u, oracle, nForget) {
		out = append(out, schema.Flag{Kind: f.kind, Text: flagtext.Note(f.note)})
	}
	return out
}
