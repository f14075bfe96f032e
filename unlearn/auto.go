package unlearn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
)

// AutoVersion numbers the auto schedule's rule (range test, stretching,
// stopping rule and their defaults). Bump it with every change that can
// change a result: the experiment cache keys auto runs by it, so results of
// an older rule are never reused. What each version changed and why is in
// docs/METHODS.md, "The auto rule's versions".
const AutoVersion = 9

// Schedules (Config.Schedule).
const (
	// ScheduleFixed trains for Config.Epochs at Config.LR (the default).
	ScheduleFixed = "fixed"
	// ScheduleAuto picks the learning rate with a range test and the number
	// of epochs with the oracle-free proxies; see AutoConfig.
	ScheduleAuto = "auto"
)

// ProxyConfig configures the oracle-free proxies (schema.Proxies): computed in
// auto mode always, in fixed mode when Track is set.
//
// The held-out slice: round(HoldoutFraction·|retain|) retain examples,
// clamped to [HoldoutMin, HoldoutMax] and to at most half of the retain set,
// drawn uniformly without replacement with PCG(Config.Seed, stream 0x401d)
// (one stream of the run's seed, so the same seed holds out the same
// examples for every algorithm). They are removed from the retain set the
// algorithm trains on, in fixed mode with Track too, so that the proxies
// mean the same in both modes; Result.Proxies.Holdout lists them.
type ProxyConfig struct {
	// Track computes the proxies in fixed mode: for the input model, after
	// every epoch of a training algorithm, and for the result (ssd and iu:
	// before and after only).
	Track bool
	// HoldoutFraction is the share of the retain set held out [0.05];
	// HoldoutMin [100] and HoldoutMax [2000] bound the slice's size. The
	// slice is taken from what the algorithm trains on, so it is kept small.
	HoldoutFraction        float64
	HoldoutMin, HoldoutMax int
	// IIDAlpha is the significance of the χ² test that decides whether the
	// forget set is IID (eval.NewProxyReference) [1e-3].
	IIDAlpha float64
	// Feature is the proxy MIA's feature ("" = "confidence"; see
	// schema.ProxyMIA) and NoMIA skips the attack.
	Feature string
	NoMIA   bool
}

// AutoConfig configures the auto schedule (Config.Schedule = "auto") of the
// training algorithms (rft, finetune, neggrad, neggrad+, random-label,
// l1-sparse, scrub). Zero values take the defaults in brackets; a negative
// tolerance means zero.
//
// 1. Learning-rate range test (skipped when Config.LR is set: that rate is
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
// (Config.Epochs becomes the cap: rft's and finetune's cosine reach
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
type AutoConfig struct {
	// MaxEpochs is the hard cap [Config.Epochs when set, else twice the
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

// forgetLimit is the forget accuracy the rule accepts before its
// tolerance: the model's own reference accuracy, or the target's ceiling
// when that is lower, or the ceiling alone when t.ForgetFixed.
func (t Targets) forgetLimit(p schema.Proxies) float64 {
	if t.ForgetSet && t.ForgetFixed {
		return t.Forget
	}
	if t.ForgetSet {
		return min(p.ReferenceAccuracy, t.Forget)
	}
	return p.ReferenceAccuracy
}

// Utility baselines (AutoConfig.UtilityBaseline) and forget baselines
// (AutoConfig.ForgetBaseline).
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
func (a AutoConfig) utility(p schema.Proxies) float64 {
	if a.testUtility() {
		return p.TestAccuracy
	}
	return p.HoldoutAccuracy
}

func (a AutoConfig) testUtility() bool {
	return a.UtilityBaseline == UtilityEstimate || a.UtilityBaseline == UtilityTest || a.UtilityBaseline == ""
}

func (a AutoConfig) utilityName() string {
	if a.testUtility() {
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
// (Targets.forgetLimit) + ForgetTolerance plus the utility's (test
// accuracy's, by default) shortfall under t.Utility − UtilityTolerance (0
// when both hold). A run that stops for the cap or for lack of progress
// returns its epoch of least violation (the earliest on a tie).
func (a AutoConfig) Violation(t Targets, p schema.Proxies) float64 {
	ft, ut := max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	return max(0, p.ForgetAccuracy-t.forgetLimit(p)-ft) + max(0, t.Utility-ut-a.utility(p))
}

// BestEpoch returns the 1-based epoch of history with the least Violation
// (the earliest on a tie), 0 for an empty history.
func (a AutoConfig) BestEpoch(t Targets, history []schema.Proxies) int {
	return a.improvedAt(t, history, 0)
}

// lastProgress returns the 1-based epoch of history at which the violation
// last improved by more than MinProgress (see improvedAt).
func (a AutoConfig) lastProgress(t Targets, history []schema.Proxies) int {
	return a.improvedAt(t, history, max(a.MinProgress, 0))
}

// improvedAt returns the last 1-based epoch of history whose violation
// lay more than `by` under the best value so far, which only such an
// epoch updates (by = 0: the earliest epoch of least violation), 0 for an
// empty history.
func (a AutoConfig) improvedAt(t Targets, history []schema.Proxies, by float64) int {
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
func (a AutoConfig) Decide(t Targets, history []schema.Proxies) schema.ProxyDecision {
	e := len(history)
	if e == 0 {
		return schema.ProxyDecision{Detail: "no epoch trained yet"}
	}
	p := history[e-1]
	ft, ut := max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	limit := t.forgetLimit(p)
	target := t.Utility
	d := schema.ProxyDecision{
		ForgetOK:  p.ForgetAccuracy <= limit+ft,
		UtilityOK: a.utility(p) >= target-ut,
	}
	what := "reference"
	if limit < p.ReferenceAccuracy || t.ForgetFixed {
		what = "oracle estimate"
	}
	forget := fmt.Sprintf("forget accuracy %.3f vs %s %.3f (%+.3f, tolerance %.3g)", p.ForgetAccuracy, what, limit, p.ForgetAccuracy-limit, ft)
	u := a.utility(p)
	utility := fmt.Sprintf("%s %.3f vs target %.3f (%+.3f, tolerance %.3g)", a.utilityName(), u, target, u-target, ut)
	switch {
	case d.ForgetOK && d.UtilityOK && e >= max(a.MinEpochs, 1):
		d.Stop, d.Reason, d.Epoch = true, StopUnseen, e
		d.Detail = fmt.Sprintf("epoch %d: the forget set looks unseen (%s) and utility has recovered (%s)", e, forget, utility)
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
		d.Detail = fmt.Sprintf("reached the cap of %d epochs; %s; the result is epoch %d, the closest to both", a.MaxEpochs, strings.Join(why, "; "), d.Epoch)
	case a.Patience > 0 && e-a.lastProgress(t, history) >= a.Patience:
		d.Stop, d.Reason = true, StopNoProgress
		d.Epoch = a.BestEpoch(t, history)
		by := ""
		if a.MinProgress > 0 {
			by = fmt.Sprintf(" by more than %.3g", a.MinProgress)
		}
		d.Detail = fmt.Sprintf("epoch %d: no closer to the conditions%s for %d epochs (%s; %s); the result is epoch %d, the closest to both", e, by, a.Patience, forget, utility, d.Epoch)
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
// budget ÷ roundSteps (AutoConfig.RoundBudget), and that cap; the smallest
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

const (
	streamHoldout = 0x401d
	streamProbe   = 0x960b
)

// proxyState is what a run with proxies keeps.
type proxyState struct {
	log     *schema.ProxyLog
	scratch *graph.Model // engine states are written here to be evaluated
	opts    eval.ProxyOptions
}

// autoState is what an auto run keeps.
type autoState struct {
	rangeTest bool
	probe     []int
}

// isTraining reports whether algo trains in epochs and not from scratch
// (auto applies).
func isTraining(algo string) bool {
	a, err := LookupAlgorithm(algo)
	return err == nil && a.Epochs && !a.FromScratch
}

// resolveSchedule checks the schedule and, in auto mode, sets the cap;
// userEpochs and userLR are the caller's Config.Epochs and Config.LR before
// defaults.
func (c *Config) resolveSchedule(algo string, userEpochs int, userLR float64) error {
	switch c.Schedule {
	case "", ScheduleFixed:
		c.Schedule = ScheduleFixed
		return nil
	case ScheduleAuto:
	default:
		return fmt.Errorf("%w: schedule %q; choose %q or %q", ErrInput, c.Schedule, ScheduleFixed, ScheduleAuto)
	}
	if !isTraining(algo) {
		return fmt.Errorf("%w: schedule auto applies to the training algorithms, not %s", ErrInput, algo)
	}
	a := &c.Auto
	if a.MaxEpochs == 0 {
		if userEpochs > 0 {
			a.MaxEpochs = userEpochs
		} else {
			a.MaxEpochs = max(3, 2*Defaults(algo).Epochs)
		}
	}
	if a.MinEpochs == 0 {
		a.MinEpochs = 1
	}
	if a.Patience == 0 {
		a.Patience = 3
	}
	if a.ForgetTolerance == 0 {
		a.ForgetTolerance, a.ScaleForgetTolerance = 0.01, true
	}
	if a.UtilityTolerance == 0 {
		a.UtilityTolerance = 0.005
	}
	a.ForgetTolerance, a.UtilityTolerance = max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	if len(a.LRs) == 0 {
		base := Defaults(algo).LR
		for k := -2; k <= 2; k++ {
			a.LRs = append(a.LRs, base*math.Pow(10, float64(k)/2))
		}
	} else {
		a.LRs = slices.Clone(a.LRs)
	}
	if a.RangeSteps == 0 {
		a.RangeSteps = 10
	}
	if a.RangeSlack == 0 {
		a.RangeSlack = 0.05
	}
	if a.RoundBudget == 0 {
		a.RoundBudget = 16
	}
	if a.SplitAllowance == 0 {
		a.SplitAllowance = 0.005
	}
	a.MinProgress = max(a.MinProgress, 0)
	a.SplitAllowance = max(a.SplitAllowance, 0)
	switch a.UtilityBaseline {
	case "":
		a.UtilityBaseline = UtilityEstimate
	case UtilityEstimate, UtilityTest, UtilityMatched, UtilityHoldout:
	default:
		return fmt.Errorf("%w: utility baseline %q; choose %q, %q, %q or %q", ErrInput, a.UtilityBaseline, UtilityEstimate, UtilityTest, UtilityMatched, UtilityHoldout)
	}
	switch a.ForgetBaseline {
	case "":
		a.ForgetBaseline = ForgetEstimate
	case ForgetEstimate, ForgetReference:
	default:
		return fmt.Errorf("%w: forget baseline %q; choose %q or %q", ErrInput, a.ForgetBaseline, ForgetEstimate, ForgetReference)
	}
	switch {
	case a.MaxEpochs < 1 || a.MinEpochs < 1 || a.MinEpochs > a.MaxEpochs:
		return fmt.Errorf("%w: auto schedule epochs: min %d, max %d", ErrInput, a.MinEpochs, a.MaxEpochs)
	case a.Patience < 0:
		return fmt.Errorf("%w: auto schedule patience %d", ErrInput, a.Patience)
	case a.RangeSteps < 1:
		return fmt.Errorf("%w: auto schedule range steps %d", ErrInput, a.RangeSteps)
	case math.IsNaN(a.ForgetTolerance) || math.IsNaN(a.UtilityTolerance) || math.IsNaN(a.RangeSlack) || math.IsNaN(a.SplitAllowance) || math.IsNaN(a.MinProgress) || math.IsNaN(a.RoundBudget):
		return fmt.Errorf("%w: auto schedule tolerance NaN", ErrInput)
	}
	for _, lr := range a.LRs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return fmt.Errorf("%w: range-test learning rate %v", ErrInput, lr)
		}
	}
	if userLR != 0 {
		a.LRs = nil
	}
	c.Epochs = a.MaxEpochs
	return nil
}

func (p ProxyConfig) withDefaults() ProxyConfig {
	if p.HoldoutFraction == 0 {
		p.HoldoutFraction = 0.05
	}
	if p.HoldoutMin == 0 {
		p.HoldoutMin = 100
	}
	if p.HoldoutMax == 0 {
		p.HoldoutMax = 2000
	}
	if p.IIDAlpha == 0 {
		p.IIDAlpha = eval.DefaultIIDAlpha
	}
	return p
}

func (p ProxyConfig) check() error {
	if !(p.HoldoutFraction > 0 && p.HoldoutFraction < 1) || p.HoldoutMin < 1 || p.HoldoutMax < p.HoldoutMin {
		return fmt.Errorf("%w: held-out slice: fraction %v, min %d, max %d", ErrInput, p.HoldoutFraction, p.HoldoutMin, p.HoldoutMax)
	}
	if !(p.IIDAlpha > 0 && p.IIDAlpha < 1) {
		return fmt.Errorf("%w: IID test significance %v", ErrInput, p.IIDAlpha)
	}
	if p.Feature != "" {
		if _, err := eval.ParseFeature(p.Feature); err != nil {
			return fmt.Errorf("%w: proxy MIA feature %q", ErrInput, p.Feature)
		}
	}
	return nil
}

// HoldoutSize returns the size of the held-out slice of a retain set of n
// examples under p (defaults filled): round(HoldoutFraction·n) clamped to
// [HoldoutMin, HoldoutMax] and to ⌊n/2⌋.
func (p ProxyConfig) HoldoutSize(n int) int {
	k := int(math.Round(p.HoldoutFraction * float64(n)))
	k = min(max(k, p.HoldoutMin), p.HoldoutMax)
	return min(k, n/2)
}

// setupProxies holds the slice out of the retain set, picks the reference,
// prepares the scratch model and measures the input model.
func (r *Runner) setupProxies(a *Algorithm) error {
	start := time.Now()
	in := r.in
	pc := r.cfg.Proxies
	if len(in.Forget) == 0 {
		return fmt.Errorf("%w: the proxies need a non-empty forget set", ErrInput)
	}
	if in.Data.Test == nil || in.Data.Test.Len() == 0 {
		return fmt.Errorf("%w: the proxies need test examples (the reference of what unseen looks like)", ErrInput)
	}
	k := pc.HoldoutSize(len(in.Retain))
	if k < 1 {
		return fmt.Errorf("%w: a retain set of %d examples leaves none to hold out for the proxies", ErrInput, len(in.Retain))
	}
	perm := r.Rand(streamHoldout).Perm(len(in.Retain))
	out := make([]bool, len(in.Retain))
	hold := make([]int, 0, k)
	for _, j := range perm[:k] {
		out[j] = true
		hold = append(hold, in.Retain[j])
	}
	sort.Ints(hold)
	keep := make([]int, 0, len(in.Retain)-k)
	for j, i := range in.Retain {
		if !out[j] {
			keep = append(keep, i)
		}
	}
	r.in.Retain = keep
	if a.UsesRetain && len(keep) == 0 {
		return fmt.Errorf("%w: no retain example left to train on after holding out %d", ErrInput, k)
	}
	trainLabels := in.Data.Train.Labels(nil)
	testLabels := in.Data.Test.Labels(nil)
	classes := in.Data.Classes
	for _, y := range append(slices.Clone(trainLabels), testLabels...) {
		classes = max(classes, y+1)
	}
	ref, err := eval.NewProxyReference(trainLabels, testLabels, in.Forget, classes, pc.IIDAlpha)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	scratch, err := onnxio.Clone(in.Model)
	if err != nil {
		return err
	}
	r.proxy = &proxyState{
		log:     &schema.ProxyLog{Reference: ref, Holdout: hold, HoldoutSize: k},
		scratch: scratch,
		opts:    eval.ProxyOptions{Feature: pc.Feature, NoMIA: pc.NoMIA},
	}
	p, matched, err := r.evalBefore(in.Model)
	if err != nil {
		return err
	}
	r.proxy.log.Before = *p
	r.proxy.log.BeforeMatchedTest = matched
	r.proxy.log.After = *p
	r.res.Proxies = r.proxy.log
	kind := "IID: the reference is the whole test split"
	if !ref.IID {
		kind = fmt.Sprintf("non-IID (χ² %.1f > %.1f): the reference is the %d test examples of classes %v, weighted by the forget set's shares", ref.ChiSquare, ref.Critical, ref.NTest, ref.Classes)
	}
	r.Note("proxies: %d retain examples held out (not trained on); forget set %s; input model: forget accuracy %.3f, reference %.3f, held-out %.3f, test %.3f (weighted like the held-out slice %.3f)",
		k, kind, p.ForgetAccuracy, p.ReferenceAccuracy, p.HoldoutAccuracy, p.TestAccuracy, matched)
	if est := r.proxy.log.Estimate; est != nil {
		r.Note("oracle estimate (%s: the input model's test logits shifted by the log-ratio of each class's share of the training split without and with the forget set, largest |shift| %.3f%s): test accuracy %.3f, forget accuracy %.3f",
			est.Method, est.MaxShift, removedNote(est.Removed), est.TestAccuracy, est.ReferenceAccuracy)
	}
	r.proxy.log.Seconds += time.Since(start).Seconds()
	return nil
}

// removedNote names the classes a forget set removes entirely.
func removedNote(removed []int) string {
	if len(removed) == 0 {
		return ""
	}
	return fmt.Sprintf("; classes %v removed entirely, never predicted", removed)
}

// evalBefore measures the input model on the proxy groups and its test
// accuracy weighted like the held-out slice.
func (r *Runner) evalBefore(m *graph.Model) (*schema.Proxies, float64, error) {
	ps := r.proxy
	c, err := eval.NewClassifier(m, r.cfg.Runtime, 256)
	if err != nil {
		return nil, 0, err
	}
	defer c.Close()
	f, h, rf, err := eval.ProxyLogits(c, r.in.Data, r.in.Forget, ps.log.Holdout, ps.log.Reference)
	if err != nil {
		return nil, 0, err
	}
	p, err := eval.ComputeProxies(f, h, rf, ps.log.Reference, ps.opts)
	if err != nil {
		return nil, 0, fmt.Errorf("proxies of the input model: %w", err)
	}
	test := r.in.Data.Test
	lg, err := c.Logits(test, data.Range(test.Len()), nil)
	if err != nil {
		return nil, 0, err
	}
	matched, ok, err := eval.MatchedAccuracy(eval.Outputs{Logits: lg, Labels: test.Labels(nil), Classes: c.Classes()}, h.Labels)
	if err != nil {
		return nil, 0, fmt.Errorf("proxies of the input model: %w", err)
	}
	if !ok {
		return nil, 0, fmt.Errorf("%w: no test example of the held-out slice's classes", ErrInput)
	}
	p.TestAccuracy = eval.Accuracy(eval.Argmax(lg, c.Classes()), test.Labels(nil))
	est, err := eval.EstimateOracle(eval.Outputs{Logits: lg, Labels: test.Labels(nil), Classes: c.Classes()}, r.in.Data.Train.Labels(nil), r.in.Forget, ps.log.Reference)
	if err != nil {
		return nil, 0, fmt.Errorf("oracle estimate: %w", err)
	}
	ps.log.Estimate = est
	return p, matched, nil
}

// evalProxies measures m on the proxy groups.
func (r *Runner) evalProxies(m *graph.Model) (*schema.Proxies, error) {
	ps := r.proxy
	p, err := eval.EvaluateProxies(m, r.in.Data, r.in.Forget, ps.log.Holdout, ps.log.Reference, r.cfg.Runtime, 256, ps.opts)
	if err != nil {
		if errors.Is(err, eval.ErrNonFinite) {
			return nil, fmt.Errorf("%w: %v", train.ErrNonFinite, err)
		}
		return nil, fmt.Errorf("proxies: %w", err)
	}
	return p, nil
}

// proxiesAfter measures the engine's state after epoch ep (1-based).
func (r *Runner) proxiesAfter(e *train.Engine, ep int, lr float64) error {
	start := time.Now()
	if _, err := e.WriteBack(r.proxy.scratch.Graph); err != nil {
		return err
	}
	p, err := r.evalProxies(r.proxy.scratch)
	if err != nil {
		return fmt.Errorf("epoch %d: %w", ep, err)
	}
	sec := time.Since(start).Seconds()
	log := r.proxy.log
	log.Epochs = append(log.Epochs, schema.EpochProxies{Epoch: ep, LR: lr, Proxies: *p, Seconds: sec})
	log.After = *p
	log.Seconds += sec
	return nil
}

// engineState is a copy of an engine's parameters and running statistics.
type engineState struct {
	params  [][]float32
	running map[string][]float32
}

func saveState(e *train.Engine) engineState {
	var s engineState
	s.save(e)
	return s
}

// save copies e's state into s, reusing s's buffers.
func (s *engineState) save(e *train.Engine) {
	ps := e.Params()
	if len(s.params) != len(ps) {
		s.params = make([][]float32, len(ps))
	}
	for i, p := range ps {
		s.params[i] = append(s.params[i][:0], p.Data...)
	}
	if s.running == nil {
		s.running = map[string][]float32{}
	}
	for name, v := range e.Running() {
		s.running[name] = append(s.running[name][:0], v...)
	}
}

func (s engineState) restore(e *train.Engine) {
	for i, p := range e.Params() {
		copy(p.Data, s.params[i])
	}
	copyRunning(e.Running(), s.running)
}

// probeLoss is the mean cross-entropy of the engine's weights on the probe
// examples with BatchNormalization in training form (batch statistics, as
// the training steps see them), in batches of at most 128; +Inf for
// non-finite logits. It runs the engine's training graph (its gradients are
// discarded) and so moves the running statistics: callers restore the state.
//
// Not in inference form: after rft's reset the running statistics of the
// re-initialised channels lag the weights (momentum 0.1: 35 % of the stale
// value remains after 10 steps), so the probe loss would rise with every
// candidate's rate and the test would always choose the smallest; batch
// statistics measure the weights, not the lag.
func (r *Runner) probeLoss(e *train.Engine) (float64, error) {
	const batch = 128
	probe := r.auto.probe
	var sum float64
	for at := 0; at < len(probe); at += batch {
		idx := probe[at:min(at+batch, len(probe))]
		if _, err := e.LoadBatch(r.split, idx); err != nil {
			return 0, err
		}
		_, _, _, teacher, err := e.Inputs(len(idx))
		if err != nil {
			return 0, err
		}
		clear(teacher) // scrub's KL term: a defined teacher; only the logits are read
		out, err := e.StepFilled(len(idx))
		if errors.Is(err, train.ErrNonFinite) {
			return math.Inf(1), nil
		} else if err != nil {
			return 0, err
		}
		for _, v := range out.Logits {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return math.Inf(1), nil
			}
		}
		o := eval.Outputs{Logits: out.Logits, Labels: r.split.Labels(idx), Classes: e.Classes()}
		for _, l := range eval.CrossEntropy(o) {
			sum += l
		}
	}
	return sum / float64(len(probe)), nil
}

// rangeTest runs the learning-rate range test on l and returns the chosen
// rate; the engine's state is restored.
func (r *Runner) rangeTest(l Loop) (float64, error) {
	a := r.cfg.Auto
	res := r.res.Auto
	e := l.Engine
	start := time.Now()
	probe := r.Rand(streamProbe).Perm(len(r.in.Retain))
	probe = probe[:min(len(probe), 512)]
	for i, j := range probe {
		probe[i] = r.in.Retain[j]
	}
	sort.Ints(probe)
	r.auto.probe = probe
	state := saveState(e)
	defer state.restore(e)
	steps, step, err := l.Epoch(0)
	if err != nil {
		return 0, err
	}
	k := min(a.RangeSteps, steps)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i * steps / k
	}
	res.RangeSteps = k
	if res.StartLoss, err = r.probeLoss(e); err != nil {
		return 0, err
	}
	var lrs []float64
	lrs, res.LRCap = CapRates(a.LRs, a.RoundBudget, roundSteps(steps, a.EpochFraction))
	total := k * len(lrs)
	for c, lr := range lrs {
		state.restore(e)
		opt := r.Optimizer()
		trial := schema.LRTrial{LR: lr}
		for i, s := range idx {
			if err := r.ctx.Err(); err != nil {
				return 0, err
			}
			out, err := step(s)
			if errors.Is(err, train.ErrNonFinite) {
				// A NaN or Inf loss or gradient at this rate is what a
				// range test looks for: the rate is past the usable range.
				trial.Diverged = true
				break
			} else if err != nil {
				return 0, fmt.Errorf("range test at lr %g: %w", lr, err)
			}
			if math.IsNaN(out.Loss) || math.IsInf(out.Loss, 0) || train.CheckFinite(e.Params()) != nil {
				trial.Diverged = true
				break
			}
			if l.Hook != nil {
				l.Hook(0, e.Params())
			}
			if err := opt.Step(e.Params(), lr); err != nil {
				return 0, err
			}
			if CheckFiniteData(e.Params()) != nil {
				trial.Diverged = true
				break
			}
			r.Report(Progress{Phase: "lr-range", Step: c*k + i + 1, Steps: total, Rates: len(lrs), Loss: out.Loss, LR: lr})
		}
		if !trial.Diverged {
			loss, err := r.probeLoss(e)
			if err != nil {
				return 0, err
			}
			if math.IsInf(loss, 0) || math.IsNaN(loss) {
				trial.Diverged = true
			} else {
				trial.Loss = loss
			}
		}
		res.RangeTest = append(res.RangeTest, trial)
	}
	res.RangeS = time.Since(start).Seconds()
	lr, ok := ChooseLR(res.RangeTest, a.RangeSlack)
	if !ok {
		rates := make([]string, len(lrs))
		for i, lr := range lrs {
			rates[i] = fmt.Sprintf("%.4g", lr)
		}
		return 0, fmt.Errorf("%w: every range-test learning rate diverged (%s): the loss or a gradient became NaN or Inf within %d steps at each; give a fixed --lr below %s, or check the model and data (e.g. --mean/--std)",
			train.ErrNonFinite, strings.Join(rates, ", "), k, rates[0])
	}
	return lr, nil
}

// fitAuto is fit under the auto schedule.
func (r *Runner) fitAuto(l Loop) error {
	a := r.cfg.Auto
	res := r.res.Auto
	lr := r.cfg.LR
	if r.auto.rangeTest {
		var err error
		if lr, err = r.rangeTest(l); err != nil {
			return err
		}
		var parts []string
		for _, t := range res.RangeTest {
			if t.Diverged {
				parts = append(parts, fmt.Sprintf("%.3g: diverged", t.LR))
			} else {
				parts = append(parts, fmt.Sprintf("%.3g: %.4f", t.LR, t.Loss))
			}
		}
		capped := ""
		if res.LRCap > 0 && len(res.RangeTest) < len(a.LRs) {
			capped = fmt.Sprintf(" (%d of %d candidates: at most %g rate-steps per round of %d steps, lr ≤ %.3g)", len(res.RangeTest), len(a.LRs), a.RoundBudget, int(math.Round(a.RoundBudget/res.LRCap)), res.LRCap)
		}
		r.Note("auto schedule: learning-rate range test%s, %d steps per candidate, retain probe loss (start %.4f) %s; chose lr %g (largest within %g of the best)",
			capped, res.RangeSteps, res.StartLoss, strings.Join(parts, "; "), lr, a.RangeSlack)
	} else {
		r.Note("auto schedule: learning rate %g as given (no range test)", lr)
	}
	res.LR = lr
	res.UtilityBaseline, res.ForgetBaseline = a.UtilityBaseline, a.ForgetBaseline
	res.ForgetTolerance, res.UtilityTolerance = max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	est := r.proxy.log.Estimate
	switch a.UtilityBaseline {
	case UtilityMatched:
		res.UtilityTarget = r.proxy.log.BeforeMatchedTest
	case UtilityHoldout:
		res.UtilityTarget = r.proxy.log.Before.HoldoutAccuracy
	case UtilityTest:
		res.UtilityTarget = r.proxy.log.Before.TestAccuracy
	default:
		res.UtilityTarget = est.TestAccuracy
	}
	targets := Targets{Utility: res.UtilityTarget}
	if a.ForgetBaseline == ForgetEstimate {
		targets.Forget, targets.ForgetSet = est.ReferenceAccuracy, true
		res.ForgetCeiling = &targets.Forget
		// An IID forget set is held against the estimate alone
		// (Targets.ForgetFixed), with the split allowance.
		targets.ForgetFixed = r.proxy.log.Reference != nil && r.proxy.log.Reference.IID && len(est.Partial) == 0
		res.ForgetFixed = targets.ForgetFixed
	}
	// Not when the forget set thins classes: there the estimate is already
	// an upper bound of the oracle's forget accuracy (it leaves out the
	// worse features of a class with fewer examples), and two standard
	// errors more would let a run stop far above the oracle.
	if a.ScaleForgetTolerance && len(est.Partial) == 0 {
		lvl := min(r.proxy.log.Before.ReferenceAccuracy, est.ReferenceAccuracy)
		if noise := ForgetNoise(lvl, len(r.in.Forget), r.proxy.log.Reference.NTest); noise > a.ForgetTolerance {
			a.ForgetTolerance = noise
			res.ForgetTolerance = noise
			r.Note("auto schedule: forget tolerance %.3f, two standard errors of a forget accuracy near %.3f measured on %d forget and %d reference examples (wider than the default %.3f)",
				noise, lvl, len(r.in.Forget), r.proxy.log.Reference.NTest, 0.01)
		}
	}
	if a.ScaleForgetTolerance && targets.ForgetFixed && a.SplitAllowance > 0 {
		a.ForgetTolerance += a.SplitAllowance
		res.ForgetTolerance, res.SplitAllowance = a.ForgetTolerance, a.SplitAllowance
		r.Note("auto schedule: IID forget set: forget accuracy held against the oracle estimate's %.3f, tolerance %.3f including %.3f for unseen training examples scoring above the test split",
			targets.Forget, a.ForgetTolerance, a.SplitAllowance)
	}
	scale := lr / r.cfg.LR
	var hist []schema.Proxies
	// best holds the state after the epoch of least violation so far: a
	// run that stops without meeting the rule returns that epoch.
	var best engineState
	bestV := math.Inf(1)
	log := r.proxy.log
	for ep := 0; ep < l.Epochs; ep++ {
		elr := l.LR(ep) * scale
		if err := r.trainEpoch(l, ep, elr, l.Epochs, !a.NoAnneal, a.EpochFraction); err != nil {
			return err
		}
		if err := r.proxiesAfter(l.Engine, ep+1, elr); err != nil {
			return err
		}
		hist = append(hist, log.After)
		d := a.Decide(targets, hist)
		log.Epochs[len(log.Epochs)-1].Decision = &d
		v := a.Violation(targets, log.After)
		if d.Stop {
			res.StopEpoch, res.Epoch, res.Reason, res.Detail = ep+1, d.Epoch, d.Reason, d.Detail
			if d.Epoch != ep+1 {
				best.restore(l.Engine)
				log.After = hist[d.Epoch-1]
			}
			break
		}
		if v < bestV {
			bestV = v
			best.save(l.Engine)
		}
	}
	r.Note("auto schedule: stopped after epoch %d of at most %d (%s): %s", res.StopEpoch, res.MaxEpochs, res.Reason, res.Detail)
	return nil
}

// annealFloor is the fraction of an epoch's rate its last steps reach
// under the auto schedule's annealing.
const annealFloor = 0.01

// AnnealFactor is the auto schedule's rate multiplier for step s (0-based)
// of an epoch of n steps: annealFloor + (1 − annealFloor)·(1 + cos(π·s/n))/2,
// 1 at the first step, decreasing towards annealFloor.
func AnnealFactor(s, n int) float64 {
	if n <= 1 {
		return 1
	}
	return annealFloor + (1-annealFloor)*(1+math.Cos(math.Pi*float64(s)/float64(n)))/2
}
