package autorule

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/unlearn-tool/unlearn/schema"
)

// Version numbers the auto schedule's rule (range test, stretching,
// stopping rule and their defaults). Bump it with every change that can
// change a result: the experiment cache keys auto runs by it, so results of
// an older rule are never reused. What each version changed and why is in
// docs/METHODS.md, "The auto rule's versions".
const Version = 9

// Config configures the auto schedule (unlearn.Config.Schedule = "auto") of the
// training algorithms (rft, finetune, neggrad, neggrad+, random-label,
// l1-sparse, scrub). Zero values take the defaults in brackets; a negative
// tolerance means zero.
//
// 1. Learning-rate range test (skipped when unlearn.Config.LR is set: that rate is
// used). From the state the algorithm starts from (after rft's reset),
// each candidate in LRs runs RangeSteps steps of the algorithm's own first
// epoch (the same batches for every candidate, spread evenly over the
// epoch, so scrub's max- and min-steps both take part) at a constant rate
// with fresh momentum; then the mean cross-entropy of a probe of
// min(512, |retain|) retain examples (training part, drawn with the run's
// seed) is measured with batch statistics (probeLoss says why not the
// running ones), and the state is restored. The rule
// (ChooseLR): the largest candidate whose probe loss is finite and at most
// RangeSlack above the smallest probe loss; a candidate that diverged
// (non-finite gradient, weight or logit) is out, and so is every larger one.
// Larger rates forget faster; the slack keeps the ones that cost retain
// loss out.
//
// 2. Training: the algorithm's own schedule stretched over MaxEpochs
// (unlearn.Config.Epochs becomes the cap: rft's and finetune's cosine reach
// 0.01·lr at the cap, l1-sparse's penalty decays over it) and scaled to the
// chosen rate. After every epoch the proxies are measured and the stopping
// rule (Decide) applied: stop once, after at least MinEpochs epochs,
//
//	forget accuracy ≤ reference accuracy + ForgetTolerance   (looks unseen)
//	test accuracy ≥ the input model's − UtilityTolerance     (utility back)
//
// (by default with targets from the oracle estimate: see UtilityBaseline,
// ForgetBaseline and, for IID forget sets, SplitAllowance), or at
// MaxEpochs, or when Violation (how far from both conditions) has not
// improved for Patience epochs. The result is the model of the epoch that
// met the rule, else of the epoch closest to it
// (schema.AutoSchedule.Epoch), whose state is kept while later epochs
// train: one copy of the parameters.
//
// Each epoch anneals: a cosine from the epoch's rate to 0.01× of it over
// its steps (warm restarts of one epoch, as SGDR with T_0 = 1 epoch,
// T_mult = 1; Loshchilov & Hutter, ICLR 2017), so the proxies after each
// epoch describe a model at a low rate.
//
// Utility is measured on the whole test split (Proxies.TestAccuracy),
// which the run never trains on, against the oracle estimate's test
// accuracy: the held-out retain slice overstates it (the input model
// trained on the slice) and under-represents the classes of a non-IID
// forget set. docs/METHODS.md, "Without an oracle", gives the measurements
// behind each part of the rule and "The auto rule's versions" its history.
type Config struct {
	// MaxEpochs is the hard cap [unlearn.Config.Epochs when set, else twice the
	// fixed default, at least 3: rft 20, finetune 10, neggrad 3, neggrad+
	// 3, random-label 10, l1-sparse 10, scrub 6].
	MaxEpochs int
	// EpochFraction, in (0, 1], makes each round of the schedule (what
	// MaxEpochs, MinEpochs and Patience count, and what the rule judges
	// after) train over the first ⌈f·steps⌉ steps of an epoch's shuffled
	// order, a fresh sample of the retain set each round, annealed within
	// it; the rule is then checked f times as often per pass over the
	// data [1: whole epochs].
	EpochFraction float64
	// MinEpochs is the fewest epochs before the rule may stop [1].
	MinEpochs int
	// Patience stops a run whose violation (Violation) has not improved
	// by more than MinProgress for this many epochs [3]; its best epoch is
	// the result.
	Patience int
	// PlateauCuts is how many times a run that would stop for lack of
	// progress instead goes back to its epoch of least violation and
	// trains on at PlateauFactor times its rate, with its patience counted
	// afresh (as Keras's ReduceLROnPlateau with its best weights restored)
	// [0: none]. A wide reset that forgot recovers its utility slowly at
	// the range test's rate, each epoch restarting at it; a lower rate
	// lets it settle. Left out of a record when zero (as PlateauFactor),
	// so that the settings an audit recorded before the field existed
	// still match (unlearn/scoring's TestConfigEncodingPinned).
	PlateauCuts int `json:",omitempty"`
	// PlateauFactor is the rate's factor at each cut [0.3].
	PlateauFactor float64 `json:",omitempty"`
	// PatienceFrom, set by the fitting loop after a cut, is the epoch
	// from which Patience counts (an epoch before it never ends a run);
	// state of one run, never recorded.
	PatienceFrom int `json:"-"`
	// MinProgress is the least improvement of the violation that counts
	// as progress for Patience [0: any; as min_delta in Keras's
	// EarlyStopping]. Off by default: it ends runs that are still
	// recovering (docs/METHODS.md, "The auto rule's versions").
	MinProgress float64
	// ForgetTolerance [0.01] and UtilityTolerance [0.005] are the rule's
	// tolerances, as fractions (0.01 = 1 point of accuracy). A default
	// forget tolerance (not given: ScaleForgetTolerance) widens to two
	// standard errors of the forget-versus-reference comparison when that
	// is larger (ForgetNoise), except for a forget set that thins classes
	// (fitAuto): a forget set of 40 examples measures its accuracy to ±5
	// points, and a rule that asks it for 1 point stops on noise or never.
	// The utility tolerance is half a point because its target, the oracle
	// estimate's test accuracy, already lies at or a little below the
	// oracle's.
	ForgetTolerance, UtilityTolerance float64
	// ScaleForgetTolerance is set when the forget tolerance is the
	// default's: the run widens it to ForgetNoise when that is larger.
	ScaleForgetTolerance bool
	// LRs are the range test's candidates [the fixed default rate ×
	// 10^(k/2), k = −2..2].
	LRs []float64
	// RangeSteps is the number of steps per candidate [10].
	RangeSteps int
	// RoundBudget caps the range test's candidates at RoundBudget ÷ the
	// steps of one round (an epoch, or EpochFraction of one) [16;
	// negative: no cap]; the smallest candidate is kept if none is under
	// the cap. Every round restarts at the chosen rate and the rule judges
	// only its end, so the rate × steps of a round is how far a round may
	// move the model between checks; the range test's 10 steps see only
	// the fastest descent. 16 lets 0.03 through at 406 steps per round
	// (0.039) and caps nothing below 53; the measurements behind it, and
	// the sizes where it is not measured, are in docs/METHODS.md.
	RoundBudget float64
	// RangeSlack is how far (nats) above the best probe loss a larger
	// candidate may be [0.05].
	RangeSlack float64
	// NoAnneal trains each epoch at one rate, as a fixed schedule does.
	// By default each epoch anneals (AnnealFactor), so that the rule
	// judges the state at a low rate after every epoch.
	NoAnneal bool
	// UtilityBaseline is how the rule measures utility and what it must
	// come back to: "estimate" (the accuracy on the whole test split
	// against the oracle estimate's, eval.EstimateOracle), "test" (the test
	// split against the input model's), "holdout-matched" (the held-out
	// slice's accuracy against the input model's test accuracy weighted
	// like the slice) or "holdout" (the slice against the input model's
	// accuracy on it) ["estimate"]. The others are the rule's earlier
	// baselines, kept for comparison.
	UtilityBaseline string
	// ForgetBaseline is what the forget accuracy is held against:
	// "estimate" (the lower of the model's own reference accuracy and the
	// oracle estimate's) or "reference" (the model's own reference
	// accuracy) ["estimate"].
	ForgetBaseline string
	// SplitAllowance widens a default forget tolerance on a forget set
	// that the χ² test calls IID and that thins no class, where the forget
	// accuracy is held against the oracle estimate's reference accuracy
	// alone (Targets.ForgetFixed) [0.005; negative: none]. The reference
	// is the test split, and unseen training examples score above it (by
	// 0.3–1.0 points for the oracles of full Fashion-MNIST's 10 % IID
	// sets), so a 1-point rule can reject the oracle itself.
	SplitAllowance float64
}

// Targets are what the stopping rule holds the proxies against: the
// utility (test accuracy, or held-out accuracy under the holdout
// baselines) to come back to, and, when positive, a ceiling on the forget
// accuracy besides the model's own reference accuracy (the oracle
// estimate's reference accuracy under ForgetBaseline "estimate").
type Targets struct {
	Utility float64
	Forget  float64
	// ForgetSet says that Forget applies (a ceiling of 0 is meaningful:
	// a class removed entirely).
	ForgetSet bool
	// ForgetFixed holds the forget accuracy against Forget alone, not the
	// lower of it and the model's own reference accuracy: on an IID forget
	// set the own reference (the test split) dips while utility recovers
	// and takes the ceiling down with it, below where an oracle lands.
	ForgetFixed bool
}

// ForgetLimit is the forget accuracy the rule accepts before its
// tolerance: the model's own reference accuracy, or the target's ceiling
// when that is lower, or the ceiling alone when t.ForgetFixed.
func (t Targets) ForgetLimit(p schema.Proxies) float64 {
	if t.ForgetSet && t.ForgetFixed {
		return t.Forget
	}
	if t.ForgetSet {
		return min(p.ReferenceAccuracy, t.Forget)
	}
	return p.ReferenceAccuracy
}

// Utility baselines (Config.UtilityBaseline) and forget baselines
// (Config.ForgetBaseline).
const (
	UtilityEstimate = "estimate"
	UtilityTest     = "test"
	ForgetEstimate  = "estimate"
	ForgetReference = "reference"
	UtilityMatched  = "holdout-matched"
	UtilityHoldout  = "holdout"
)

// utility is the accuracy the rule holds against its target: the test
// split's by default, the held-out slice's under the holdout baselines.
func (a Config) Utility(p schema.Proxies) float64 {
	if a.TestUtility() {
		return p.TestAccuracy
	}
	return p.HoldoutAccuracy
}

func (a Config) TestUtility() bool {
	return a.UtilityBaseline == UtilityEstimate || a.UtilityBaseline == UtilityTest || a.UtilityBaseline == ""
}

func (a Config) UtilityName() string {
	if a.TestUtility() {
		return "test accuracy"
	}
	return "held-out retain accuracy"
}

// StopReason says why an auto run stopped (schema.AutoSchedule.Reason).
type StopReason = string

// Why an auto run stopped (schema.AutoSchedule.Reason).
const (
	// StopUnseen: the forget set looks unseen and utility has recovered.
	StopUnseen = "unseen-and-recovered"
	// StopMaxEpochs: the cap was reached first.
	StopMaxEpochs = "max-epochs"
	// StopNoProgress: the violation did not improve for Patience epochs.
	StopNoProgress = "no-progress"
)

// Violation is how far the proxies p are from the stopping rule's two
// conditions, in accuracy: the forget accuracy's excess over its limit
// (Targets.ForgetLimit) + ForgetTolerance plus the utility's (test
// accuracy's, by default) shortfall under t.Utility − UtilityTolerance (0
// when both hold). A run that stops for the cap or for lack of progress
// returns its epoch of least violation (the earliest on a tie).
func (a Config) Violation(t Targets, p schema.Proxies) float64 {
	ft, ut := max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	return max(0, p.ForgetAccuracy-t.ForgetLimit(p)-ft) + max(0, t.Utility-ut-a.Utility(p))
}

// ForgetMet says whether p meets the rule's forget condition.
func (a Config) ForgetMet(t Targets, p schema.Proxies) bool {
	return p.ForgetAccuracy <= t.ForgetLimit(p)+max(a.ForgetTolerance, 0)
}

// BestEpoch returns the 1-based epoch of history with the least Violation
// (the earliest on a tie), 0 for an empty history.
func (a Config) BestEpoch(t Targets, history []schema.Proxies) int {
	return a.improvedAt(t, history, 0)
}

// lastProgress returns the 1-based epoch of history at which the violation
// last improved by more than MinProgress (see improvedAt).
func (a Config) lastProgress(t Targets, history []schema.Proxies) int {
	return a.improvedAt(t, history, max(a.MinProgress, 0))
}

// improvedAt returns the last 1-based epoch of history whose violation
// lay more than `by` under the best value so far, which only such an
// epoch updates (by = 0: the earliest epoch of least violation), 0 for an
// empty history.
func (a Config) improvedAt(t Targets, history []schema.Proxies, by float64) int {
	last, ref := 0, math.Inf(1)
	for i, p := range history {
		if v := a.Violation(t, p); v < ref-by {
			last, ref = i+1, v
		}
	}
	return last
}

// Decide applies the auto schedule's stopping rule after epoch
// len(history): history[e−1] are the proxies after epoch e, t what
// utility must come back to and the forget accuracy's ceiling (see
// UtilityBaseline, ForgetBaseline). a must have its defaults filled (Run
// does it; a zero MaxEpochs never stops for the cap).
func (a Config) Decide(t Targets, history []schema.Proxies) schema.ProxyDecision {
	e := len(history)
	if e == 0 {
		return schema.ProxyDecision{Detail: "no epoch trained yet"}
	}
	p := history[e-1]
	ft, ut := max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	limit := t.ForgetLimit(p)
	target := t.Utility
	d := schema.ProxyDecision{
		ForgetOK:  p.ForgetAccuracy <= limit+ft,
		UtilityOK: a.Utility(p) >= target-ut,
	}
	what := "reference"
	if limit < p.ReferenceAccuracy || t.ForgetFixed {
		what = "oracle estimate"
	}
	forget := fmt.Sprintf("forget accuracy %.3f vs %s %.3f (%+.3f, tolerance %.3g)", p.ForgetAccuracy, what, limit,
		p.ForgetAccuracy-limit, ft)
	u := a.Utility(p)
	utility := fmt.Sprintf("%s %.3f vs target %.3f (%+.3f, tolerance %.3g)", a.UtilityName(), u, target, u-target, ut)
	switch {
	case d.ForgetOK && d.UtilityOK && e >= max(a.MinEpochs, 1):
		d.Stop, d.Reason, d.Epoch = true, StopUnseen, e
		d.Detail = fmt.Sprintf("epoch %d: the forget set looks unseen (%s) and utility has recovered (%s)", e, forget,
			utility)
	case a.MaxEpochs > 0 && e >= a.MaxEpochs:
		d.Stop, d.Reason = true, StopMaxEpochs
		d.Epoch = a.BestEpoch(t, history)
		var why []string
		if !d.ForgetOK {
			why = append(why, "the forget set still looks seen: "+forget)
		}
		if !d.UtilityOK {
			why = append(why, "utility has not recovered: "+utility)
		}
		if len(why) == 0 {
			why = append(why, fmt.Sprintf("both conditions hold but MinEpochs is %d", a.MinEpochs))
		}
		d.Detail = fmt.Sprintf("reached the cap of %d epochs; %s; the result is epoch %d, the closest to both", a.MaxEpochs,
			strings.Join(why, "; "), d.Epoch)
	case a.Patience > 0 && e-max(a.lastProgress(t, history), a.PatienceFrom) >= a.Patience:
		d.Stop, d.Reason = true, StopNoProgress
		d.Epoch = a.BestEpoch(t, history)
		by := ""
		if a.MinProgress > 0 {
			by = fmt.Sprintf(" by more than %.3g", a.MinProgress)
		}
		d.Detail = fmt.Sprintf("epoch %d: no closer to the conditions%s for %d epochs (%s; %s); the result is epoch %d, "+
			"the closest to both", e, by, a.Patience, forget, utility, d.Epoch)
	default:
		d.Detail = fmt.Sprintf("epoch %d: %s; %s", e, forget, utility)
	}
	return d
}

// ForgetNoise is two standard errors of the difference between an
// accuracy near acc measured on nForget examples and one measured on nRef
// others (binomial): how far a forget accuracy may lie above its reference
// by chance alone.
func ForgetNoise(acc float64, nForget, nRef int) float64 {
	if nForget < 1 || nRef < 1 || !(acc > 0 && acc < 1) {
		return 0
	}
	v := acc * (1 - acc)
	return 2 * math.Sqrt(v/float64(nForget)+v/float64(nRef))
}

// ForgetSpread is two standard errors of an accuracy near acc measured on
// n examples (binomial): how far a model's forget accuracy on a forget
// set of n examples scatters around its expected accuracy (0 for acc
// outside (0, 1) or n < 1). ForgetNoise adds the reference's error to
// it; this is the forget set's alone (verdictWarnings, ResolutionPoint).
func ForgetSpread(acc float64, n int) float64 {
	if n < 1 || !(acc > 0 && acc < 1) {
		return 0
	}
	return 2 * math.Sqrt(acc*(1-acc)/float64(n))
}

// CapRates returns the range test's candidates, sorted, that are at most
// budget ÷ roundSteps (Config.RoundBudget), and that cap; the smallest
// candidate when none is under it. A budget ≤ 0 (or +Inf) caps nothing and
// the cap returned is 0.
func CapRates(lrs []float64, budget float64, roundSteps int) ([]float64, float64) {
	out := slices.Clone(lrs)
	sort.Float64s(out)
	if !(budget > 0) || math.IsInf(budget, 1) || roundSteps < 1 || len(out) == 0 {
		return out, 0
	}
	limit := budget / float64(roundSteps)
	n := 0
	for n < len(out) && out[n] <= limit {
		n++
	}
	return out[:max(n, 1)], limit
}

// ChooseLR is the range test's rule: among the trials (any order), the
// largest rate whose loss is at most slack above the smallest loss, taking
// no rate at or above the smallest one that diverged. ok is false when
// every trial diverged.
func ChooseLR(trials []schema.LRTrial, slack float64) (lr float64, ok bool) {
	t := slices.Clone(trials)
	sort.Slice(t, func(i, j int) bool { return t[i].LR < t[j].LR })
	var usable []schema.LRTrial
	for _, x := range t {
		if x.Diverged || math.IsNaN(x.Loss) || math.IsInf(x.Loss, 0) {
			break
		}
		usable = append(usable, x)
	}
	if len(usable) == 0 {
		return 0, false
	}
	best := math.Inf(1)
	for _, x := range usable {
		best = min(best, x.Loss)
	}
	for i := len(usable) - 1; i >= 0; i-- {
		if usable[i].Loss <= best+max(slack, 0) {
			return usable[i].LR, true
		}
	}
	return usable[0].LR, true // unreachable: the best one qualifies
}

// AnnealFactor is the auto schedule's rate multiplier for step s (0-based)
// of an epoch of n steps: annealFloor + (1 − annealFloor)·(1 + cos(π·s/n))/2,
// 1 at the first step, decreasing towards annealFloor.
func AnnealFactor(s, n int) float64 {
	if n <= 1 {
		return 1
	}
	return annealFloor + (1-annealFloor)*(1+math.Cos(math.Pi*float64(s)/float64(n)))/2
}

// annealFloor is the fraction of an epoch's rate its last steps reach
// under the auto schedule's annealing.
const annealFloor = 0.01
