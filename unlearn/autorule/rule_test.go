package autorule

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/unlearn-tool/unlearn/schema"
)

// stopEpoch feeds history one epoch at a time to Decide and returns the
// first decision to stop and its epoch (0 if none).
func stopEpoch(a Config, target float64, history []schema.Proxies) (int, schema.ProxyDecision) {
	for e := 1; e <= len(history); e++ {
		if d := a.Decide(Targets{Utility: target}, history[:e]); d.Stop {
			return e, d
		}
	}
	return 0, schema.ProxyDecision{}
}

// px builds the proxies of one epoch: forget, reference and utility
// accuracy (held-out and test alike, so that every baseline reads it).
func px(forget, ref, utility float64) schema.Proxies {
	return schema.Proxies{ForgetAccuracy: forget, ReferenceAccuracy: ref, HoldoutAccuracy: utility, TestAccuracy: utility, ForgetGap: forget - ref}
}

// The baseline decides which accuracy is utility: version 4's test split by
// default, the held-out slice under the holdout baselines. Here the slice
// says recovered while the test split does not (a partial reset still
// scores on examples the input model trained on).
func TestUtilityBaseline(t *testing.T) {
	p := schema.Proxies{ForgetAccuracy: 0.80, ReferenceAccuracy: 0.80, HoldoutAccuracy: 0.91, TestAccuracy: 0.89}
	for _, c := range []struct {
		baseline string
		stop     bool
		wantText string
	}{
		{"", false, "test accuracy 0.890 vs target 0.910"},
		{UtilityEstimate, false, "test accuracy 0.890"},
		{UtilityTest, false, "test accuracy 0.890"},
		{UtilityMatched, true, "held-out retain accuracy 0.910"},
		{UtilityHoldout, true, "held-out retain accuracy 0.910"},
	} {
		a := Config{UtilityBaseline: c.baseline, ForgetTolerance: 0.01, UtilityTolerance: 0.01, MinEpochs: 1, MaxEpochs: 10}
		d := a.Decide(Targets{Utility: 0.91}, []schema.Proxies{p})
		if d.Stop != c.stop || !strings.Contains(d.Detail, c.wantText) {
			t.Errorf("baseline %q: stop %v (%s), want %v and %q", c.baseline, d.Stop, d.Detail, c.stop, c.wantText)
		}
	}
}

// The stopping rule on per-epoch proxy sequences whose right stopping
// epoch is known: the first epoch at which the forget set looks unseen
// (forget ≤ reference + tolerance) and held-out accuracy is back within
// tolerance of the target, not before MinEpochs, or the cap.
func TestStoppingRule(t *testing.T) {
	base := Config{MaxEpochs: 8, MinEpochs: 1, ForgetTolerance: 0.03, UtilityTolerance: 0.03}
	const target = 0.84 // utility is back at ≥ 0.81
	cases := []struct {
		name    string
		a       Config
		history []schema.Proxies
		epoch   int
		reason  StopReason
		detail  string
	}{
		{
			// rft-like: the reset forgets at once, utility recovers slowly;
			// epoch 4 is the first with held-out ≥ 0.81 (epoch 3's 0.809
			// misses by a hair), while the forget set stays unseen.
			"reset then recovery", base, []schema.Proxies{
				px(0.08, 0.09, 0.53), px(0.50, 0.52, 0.72), px(0.66, 0.65, 0.809),
				px(0.70, 0.68, 0.815), px(0.72, 0.70, 0.83),
			}, 4, StopUnseen, "epoch 4: the forget set looks unseen",
		},
		{
			// finetune-like: utility never left, forgetting is the slow part;
			// epoch 3 has forget exactly at reference + tolerance (≤ holds).
			"slow forgetting", base, []schema.Proxies{
				px(0.89, 0.80, 0.88), px(0.86, 0.80, 0.87), px(0.83, 0.80, 0.86), px(0.80, 0.80, 0.86),
			}, 3, StopUnseen, "",
		},
		{
			// the forget set is remembered until the cap
			"cap, still remembered", base, []schema.Proxies{
				px(0.89, 0.80, 0.88), px(0.88, 0.80, 0.88), px(0.87, 0.80, 0.88), px(0.87, 0.80, 0.88),
				px(0.86, 0.80, 0.88), px(0.86, 0.80, 0.88), px(0.85, 0.80, 0.88), px(0.85, 0.80, 0.88),
				px(0.80, 0.80, 0.88),
			}, 8, StopMaxEpochs, "the forget set still looks seen",
		},
		{
			"cap, utility not back", base, []schema.Proxies{
				px(0.1, 0.1, 0.5), px(0.2, 0.2, 0.6), px(0.3, 0.3, 0.7), px(0.4, 0.4, 0.75),
				px(0.5, 0.5, 0.76), px(0.6, 0.6, 0.77), px(0.6, 0.6, 0.78), px(0.6, 0.6, 0.79),
			}, 8, StopMaxEpochs, "utility has not recovered",
		},
		{
			// both conditions hold after epoch 1, but at least 3 epochs
			"min epochs", Config{MaxEpochs: 8, MinEpochs: 3, ForgetTolerance: 0.03, UtilityTolerance: 0.03}, []schema.Proxies{
				px(0.7, 0.7, 0.85), px(0.7, 0.7, 0.85), px(0.7, 0.7, 0.85), px(0.7, 0.7, 0.85),
			}, 3, StopUnseen, "",
		},
		{
			// a good epoch that later degrades: the rule stops at the first
			"first good epoch", base, []schema.Proxies{
				px(0.5, 0.6, 0.7), px(0.65, 0.65, 0.82), px(0.80, 0.65, 0.83),
			}, 2, StopUnseen, "",
		},
		{
			// zero tolerances (negative means zero): equality suffices
			"zero tolerance", Config{MaxEpochs: 5, MinEpochs: 1, ForgetTolerance: -1, UtilityTolerance: -1}, []schema.Proxies{
				px(0.72, 0.70, 0.85), px(0.70, 0.70, 0.83), px(0.70, 0.70, 0.84),
			}, 3, StopUnseen, "",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, d := stopEpoch(c.a, target, c.history)
			if e != c.epoch || d.Reason != c.reason || !strings.Contains(d.Detail, c.detail) {
				t.Errorf("stopped at epoch %d (%s: %s), want %d (%s, %q)", e, d.Reason, d.Detail, c.epoch, c.reason, c.detail)
			}
			if d.Reason == StopUnseen && (!d.ForgetOK || !d.UtilityOK) {
				t.Errorf("decision %+v", d)
			}
		})
	}
	if d := base.Decide(Targets{Utility: target}, nil); d.Stop {
		t.Errorf("stopped before any epoch: %+v", d)
	}
}

// Without meeting the rule, a run stops at the cap or after Patience
// epochs without getting closer, and its result is the epoch of least
// violation (the earliest on a tie), not the last one.
func TestStoppingRuleBestEpoch(t *testing.T) {
	const target = 0.84 // utility is back at ≥ 0.83 (tolerance 0.01)
	a := Config{MaxEpochs: 8, MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01, UtilityTolerance: 0.01}
	cases := []struct {
		name        string
		a           Config
		history     []schema.Proxies
		stop, epoch int
		reason      StopReason
	}{
		// scrub-like collapse after a good start: violations 0.04, 0.02,
		// 0.5, 0.6: no progress for 2 epochs after epoch 2
		{"collapse", a, []schema.Proxies{px(0.85, 0.80, 0.83), px(0.83, 0.80, 0.83), px(0.3, 0.3, 0.33), px(0.2, 0.2, 0.23), px(0.85, 0.80, 0.83)}, 4, 2, StopNoProgress},
		// still improving at the cap: the last epoch
		{"cap, improving", Config{MaxEpochs: 3, MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01, UtilityTolerance: 0.01},
			[]schema.Proxies{px(0.9, 0.8, 0.83), px(0.88, 0.8, 0.83), px(0.86, 0.8, 0.83)}, 3, 3, StopMaxEpochs},
		// a tie between epochs 1 and 3 (violation 0.05) at the cap: the earlier
		{"cap, tie", Config{MaxEpochs: 3, MinEpochs: 1, Patience: 5, ForgetTolerance: 0.01, UtilityTolerance: 0.01},
			[]schema.Proxies{px(0.86, 0.8, 0.83), px(0.9, 0.8, 0.83), px(0.86, 0.8, 0.83)}, 3, 1, StopMaxEpochs},
		// the rule is met: that epoch, whatever came before
		{"met", a, []schema.Proxies{px(0.9, 0.8, 0.7), px(0.81, 0.8, 0.83)}, 2, 2, StopUnseen},
		// version 8: creeping by less than MinProgress (violations 0.05,
		// 0.049, 0.0485) is no progress; the result is still the least
		// violation
		{"creep", Config{MaxEpochs: 4, MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01, UtilityTolerance: 0.01, MinProgress: 0.002},
			[]schema.Proxies{px(0.8, 0.8, 0.78), px(0.8, 0.8, 0.781), px(0.8, 0.8, 0.7815), px(0.8, 0.8, 0.782)}, 3, 3, StopNoProgress},
		// ... which any improvement is without it: on to the cap
		{"creep, any progress", Config{MaxEpochs: 4, MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01, UtilityTolerance: 0.01, MinProgress: -1},
			[]schema.Proxies{px(0.8, 0.8, 0.78), px(0.8, 0.8, 0.781), px(0.8, 0.8, 0.7815), px(0.8, 0.8, 0.782)}, 4, 4, StopMaxEpochs},
		// a step larger than MinProgress after the creep counts, and
		// the count restarts from it
		{"creep, then a step", Config{MaxEpochs: 8, MinEpochs: 1, Patience: 2, ForgetTolerance: 0.01, UtilityTolerance: 0.01, MinProgress: 0.002},
			[]schema.Proxies{px(0.8, 0.8, 0.78), px(0.8, 0.8, 0.781), px(0.8, 0.8, 0.79), px(0.8, 0.8, 0.7905), px(0.8, 0.8, 0.7908)}, 5, 5, StopNoProgress},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, d := stopEpoch(c.a, target, c.history)
			if e != c.stop || d.Epoch != c.epoch || d.Reason != c.reason {
				t.Errorf("stopped at %d with result epoch %d (%s: %s), want %d, %d (%s)", e, d.Epoch, d.Reason, d.Detail, c.stop, c.epoch, c.reason)
			}
		})
	}
	if v := a.Violation(Targets{Utility: target}, px(0.85, 0.80, 0.80)); math.Abs(v-0.07) > 1e-12 {
		t.Errorf("violation %v, want 0.04 + 0.03", v)
	}
	// A forget ceiling below the reference (the oracle estimate's) counts
	// from the ceiling: 0.85 − 0.75 − 0.01 + 0.03.
	if v := a.Violation(Targets{Utility: target, Forget: 0.75, ForgetSet: true}, px(0.85, 0.80, 0.80)); math.Abs(v-0.12) > 1e-12 {
		t.Errorf("violation with ceiling %v, want 0.09 + 0.03", v)
	}
}

// Rule version 5 holds the forget accuracy against the lower of the
// model's own reference accuracy and the oracle estimate's (a non-IID
// forget set: the oracle also loses accuracy on the forget set's classes,
// which the model's reference does not show), and never against a higher
// ceiling; a ceiling of 0 (a class removed entirely) applies too.
func TestForgetCeiling(t *testing.T) {
	a := Config{ForgetTolerance: 0.01, UtilityTolerance: 0.01, MinEpochs: 1, MaxEpochs: 10}
	p := px(0.80, 0.80, 0.90) // looks unseen against its own reference
	// Above its own reference by more than the tolerance, under a ceiling
	// that lies above that reference: only a fixed ceiling lets it stop.
	q := px(0.83, 0.80, 0.90)
	if d := a.Decide(Targets{Utility: 0.90, Forget: 0.85, ForgetSet: true}, []schema.Proxies{q}); d.Stop {
		t.Errorf("the lower of reference and ceiling: stopped (%s)", d.Detail)
	}
	if d := a.Decide(Targets{Utility: 0.90, Forget: 0.85, ForgetSet: true, ForgetFixed: true}, []schema.Proxies{q}); !d.Stop || !strings.Contains(d.Detail, "vs oracle estimate 0.850") {
		t.Errorf("a fixed ceiling: stop %v (%s)", d.Stop, d.Detail)
	}
	for _, c := range []struct {
		t        Targets
		stop     bool
		wantText string
	}{
		{Targets{Utility: 0.90}, true, "forget accuracy 0.800 vs reference 0.800"},
		{Targets{Utility: 0.90, Forget: 0.75, ForgetSet: true}, false, "forget accuracy 0.800 vs oracle estimate 0.750"},
		{Targets{Utility: 0.90, Forget: 0.85, ForgetSet: true}, true, "vs reference 0.800"},
		{Targets{Utility: 0.90, Forget: 0, ForgetSet: true}, false, "vs oracle estimate 0.000"},
		{Targets{Utility: 0.90, Forget: 0}, true, "vs reference 0.800"},
		// Version 8, an IID forget set: the estimate alone, even where
		// it lies above the model's own reference (which dips while
		// utility recovers) ...
		{Targets{Utility: 0.90, Forget: 0.85, ForgetSet: true, ForgetFixed: true}, true, "vs oracle estimate 0.850"},
		// ... and where it lies below.
		{Targets{Utility: 0.90, Forget: 0.75, ForgetSet: true, ForgetFixed: true}, false, "vs oracle estimate 0.750"},
	} {
		d := a.Decide(c.t, []schema.Proxies{p})
		if d.Stop != c.stop || !strings.Contains(d.Detail, c.wantText) {
			t.Errorf("%+v: stop %v (%s), want %v and %q", c.t, d.Stop, d.Detail, c.stop, c.wantText)
		}
	}
}

// The range test's rule: the largest rate within the slack of the best
// probe loss; a divergence rules out that rate and every larger one.
func TestChooseLR(t *testing.T) {
	tr := func(lr, loss float64) schema.LRTrial { return schema.LRTrial{LR: lr, Loss: loss} }
	div := func(lr float64) schema.LRTrial { return schema.LRTrial{LR: lr, Diverged: true} }
	for _, c := range []struct {
		name   string
		trials []schema.LRTrial
		want   float64
		ok     bool
	}{
		// the demo's rft range test (probe loss after 10 steps from the reset)
		{"rft demo", []schema.LRTrial{tr(0.003, 4.239), tr(0.0095, 3.321), tr(0.03, 2.562), tr(0.095, 5.145), tr(0.3, 105.3)}, 0.03, true},
		{"within slack", []schema.LRTrial{tr(0.01, 0.50), tr(0.03, 0.48), tr(0.1, 0.52), tr(0.3, 0.60)}, 0.1, true},
		{"unordered", []schema.LRTrial{tr(0.3, 0.60), tr(0.1, 0.52), tr(0.01, 0.50), tr(0.03, 0.48)}, 0.1, true},
		{"divergence stops the scan", []schema.LRTrial{tr(0.01, 0.50), tr(0.03, 0.49), div(0.1), tr(0.3, 0.40)}, 0.03, true},
		{"all diverge", []schema.LRTrial{div(0.1), div(1)}, 0, false},
		{"first diverges", []schema.LRTrial{div(0.01), tr(0.1, 0.3)}, 0, false},
	} {
		got, ok := ChooseLR(c.trials, 0.05)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %g %v, want %g %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

// Rule 9's cap: candidates at most budget ÷ steps per round, the smallest
// kept when none is, nothing capped without a budget.
func TestCapRates(t *testing.T) {
	five := []float64{0.3, 0.003, 0.0949, 0.03, 0.00949} // unsorted on purpose
	for _, c := range []struct {
		name    string
		budget  float64
		steps   int
		want    []float64
		wantCap float64
	}{
		// full Fashion-MNIST: 406 steps per epoch, cap 16/406 = 0.0394
		{"full Fashion-MNIST", 16, 406, []float64{0.003, 0.00949, 0.03}, 16.0 / 406},
		// the 4,000-image regimes: 28 steps, cap 0.571, every candidate
		{"small data", 16, 28, []float64{0.003, 0.00949, 0.03, 0.0949, 0.3}, 16.0 / 28},
		{"cap on a candidate", 3, 10, []float64{0.003, 0.00949, 0.03, 0.0949, 0.3}, 0.3},
		{"none under the cap", 16, 1 << 20, []float64{0.003}, 16.0 / (1 << 20)},
		{"no budget", -1, 406, []float64{0.003, 0.00949, 0.03, 0.0949, 0.3}, 0},
		{"infinite budget", math.Inf(1), 406, []float64{0.003, 0.00949, 0.03, 0.0949, 0.3}, 0},
	} {
		got, lim := CapRates(five, c.budget, c.steps)
		if !slices.Equal(got, c.want) || lim != c.wantCap {
			t.Errorf("%s: %v cap %g, want %v cap %g", c.name, got, lim, c.want, c.wantCap)
		}
	}
	if five[0] != 0.3 {
		t.Errorf("CapRates sorted its argument: %v", five)
	}
}

// The auto schedule's annealing within an epoch: the full rate at the
// first step, a cosine down to near annealFloor at the last, never below.
func TestAnnealFactor(t *testing.T) {
	const n = 422 // steps of an epoch over 54,000 examples in batches of 128
	if f := AnnealFactor(0, n); f != 1 {
		t.Errorf("first step %v", f)
	}
	if f := AnnealFactor(n/2, n); math.Abs(f-(annealFloor+(1-annealFloor)/2)) > 1e-12 {
		t.Errorf("half way %v", f)
	}
	last := AnnealFactor(n-1, n)
	if last < annealFloor || last > annealFloor+1e-4 {
		t.Errorf("last step %v, want just above %v", last, annealFloor)
	}
	for s := 1; s < n; s++ {
		if AnnealFactor(s, n) >= AnnealFactor(s-1, n) {
			t.Fatalf("not decreasing at step %d", s)
		}
	}
	if AnnealFactor(0, 1) != 1 {
		t.Error("a one-step epoch must run at its rate")
	}
}

// ForgetNoise: two binomial standard errors of a difference of two
// accuracies; what rule version 6 widens the default forget tolerance to.
func TestForgetNoise(t *testing.T) {
	for _, c := range []struct {
		acc        float64
		nf, nr     int
		want       float64
		wantWidens bool // above the default 0.01
	}{
		{0.9, 40, 1000, 2 * math.Sqrt(0.09/40+0.09/1000), true},      // the suite's 1 % IID set
		{0.85, 400, 198, 2 * math.Sqrt(0.1275/400+0.1275/198), true}, // a non-IID set of 400
		{0.92, 6000, 10000, 2 * math.Sqrt(0.0736/6000+0.0736/10000), false},
		{0, 400, 200, 0, false}, // a class removed: no spread
		{0.9, 0, 200, 0, false},
	} {
		got := ForgetNoise(c.acc, c.nf, c.nr)
		if math.Abs(got-c.want) > 1e-12 || (got > 0.01) != c.wantWidens {
			t.Errorf("ForgetNoise(%v, %d, %d) = %v, want %v", c.acc, c.nf, c.nr, got, c.want)
		}
	}
}
