package unlearn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/unlearn/autofit"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// AutoVersion numbers the auto schedule's rule (autorule.Version); the
// experiment cache keys auto runs by it.
const AutoVersion = autorule.Version

// AutoConfig configures the auto schedule (Config.Auto): autorule.Config.
type AutoConfig = autorule.Config

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

// streamHoldout draws the held-out slice.
const streamHoldout = 0x401d

// proxyState is what a run with proxies keeps.
type proxyState struct {
	log     *schema.ProxyLog
	scratch *graph.Model // engine states are written here to be evaluated
	opts    eval.ProxyOptions
}

// autoState is what an auto run keeps: whether it runs the range test.
type autoState struct {
	rangeTest bool
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
	if a.PlateauFactor == 0 {
		a.PlateauFactor = 0.3
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
		a.UtilityBaseline = autorule.UtilityEstimate
	case autorule.UtilityEstimate, autorule.UtilityTest, autorule.UtilityMatched, autorule.UtilityHoldout:
	default:
		return fmt.Errorf("%w: utility baseline %q; choose %q, %q, %q or %q", ErrInput, a.UtilityBaseline,
			autorule.UtilityEstimate, autorule.UtilityTest, autorule.UtilityMatched, autorule.UtilityHoldout)
	}
	switch a.ForgetBaseline {
	case "":
		a.ForgetBaseline = autorule.ForgetEstimate
	case autorule.ForgetEstimate, autorule.ForgetReference:
	default:
		return fmt.Errorf("%w: forget baseline %q; choose %q or %q", ErrInput, a.ForgetBaseline, autorule.ForgetEstimate,
			autorule.ForgetReference)
	}
	switch {
	case a.MaxEpochs < 1 || a.MinEpochs < 1 || a.MinEpochs > a.MaxEpochs:
		return fmt.Errorf("%w: auto schedule epochs: min %d, max %d", ErrInput, a.MinEpochs, a.MaxEpochs)
	case a.Patience < 0:
		return fmt.Errorf("%w: auto schedule patience %d", ErrInput, a.Patience)
	case a.RangeSteps < 1:
		return fmt.Errorf("%w: auto schedule range steps %d", ErrInput, a.RangeSteps)
	case math.IsNaN(a.ForgetTolerance) || math.IsNaN(a.UtilityTolerance) || math.IsNaN(a.RangeSlack) ||
		math.IsNaN(a.SplitAllowance) || math.IsNaN(a.MinProgress) || math.IsNaN(a.RoundBudget):
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
		return fmt.Errorf("%w: held-out slice: fraction %v, min %d, max %d", ErrInput, p.HoldoutFraction, p.HoldoutMin,
			p.HoldoutMax)
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
		kind = fmt.Sprintf("non-IID (χ² %.1f > %.1f): the reference is the %d test examples of classes %v, "+
			"weighted by the "+
			"forget set's shares", ref.ChiSquare, ref.Critical, ref.NTest, ref.Classes)
	}
	r.Note("proxies: %d retain examples held out (not trained on); forget set %s; input model: forget accuracy %.3f, "+
		"reference %.3f, held-out %.3f, test %.3f (weighted like the held-out slice %.3f)",
		k, kind, p.ForgetAccuracy, p.ReferenceAccuracy, p.HoldoutAccuracy, p.TestAccuracy, matched)
	if est := r.proxy.log.Estimate; est != nil {
		r.Note("oracle estimate (%s: the input model's test logits shifted by the log-ratio of each class's share of the "+
			"training split without and with the forget set, largest |shift| %.3f%s): test accuracy %.3f, forget accuracy %.3f",
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
	c, err := infer.NewClassifier(m, r.cfg.Runtime, 256)
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
	matched, ok, err := eval.MatchedAccuracy(eval.Outputs{Logits: lg, Labels: test.Labels(nil), Classes: c.Classes()},
		h.Labels)
	if err != nil {
		return nil, 0, fmt.Errorf("proxies of the input model: %w", err)
	}
	if !ok {
		return nil, 0, fmt.Errorf("%w: no test example of the held-out slice's classes", ErrInput)
	}
	p.TestAccuracy = infer.Accuracy(infer.Argmax(lg, c.Classes()), test.Labels(nil))
	est, err := eval.EstimateOracle(eval.Outputs{Logits: lg, Labels: test.Labels(nil), Classes: c.Classes()},
		r.in.Data.Train.Labels(nil), r.in.Forget, ps.log.Reference)
	if err != nil {
		return nil, 0, fmt.Errorf("oracle estimate: %w", err)
	}
	ps.log.Estimate = est
	return p, matched, nil
}

// evalProxies measures m on the proxy groups.
func (r *Runner) evalProxies(m *graph.Model) (*schema.Proxies, error) {
	ps := r.proxy
	p, err := eval.EvaluateProxies(m, r.in.Data, r.in.Forget, ps.log.Holdout, ps.log.Reference, r.cfg.Runtime, 256,
		ps.opts)
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

// fitAuto is Fit under the auto schedule, which package autofit drives
// through this run's loop l.
func (r *Runner) fitAuto(l Loop) error {
	t := &autofit.Training{
		Ctx: r.ctx, Engine: l.Engine, Split: r.split, Retain: r.in.Retain, Rand: r.Rand, Optimizer: r.Optimizer,
		Epoch: func(ep int) (int, func(s int) (float64, error), error) {
			steps, step, err := l.Epoch(ep)
			if err != nil {
				return 0, nil, err
			}
			return steps, func(s int) (float64, error) {
				out, err := step(s)
				return out.Loss, err
			}, nil
		},
		TrainEpoch: func(ep int, lr float64, anneal bool, fraction float64) error {
			return r.trainEpoch(l, ep, lr, l.Epochs, anneal, fraction)
		},
		Measure: func(ep int, lr float64) error { return r.proxiesAfter(l.Engine, ep, lr) },
		Epochs:  l.Epochs, LR: l.LR, BaseLR: r.cfg.LR, RangeTest: r.auto.rangeTest, Forget: len(r.in.Forget),
		Note: r.Note,
		Progress: func(step, steps, rates int, loss, lr float64) {
			r.Report(Progress{Phase: "lr-range", Step: step, Steps: steps, Rates: rates, Loss: loss, LR: lr})
		},
		Log: r.proxy.log, Result: r.res.Auto,
		Decided: func(p schema.EpochProxies) { r.ReportEpoch(EpochEvent{Epochs: l.Epochs, Decided: &p}) },
	}
	if l.Hook != nil {
		t.Hook = func(params []*train.Param) { l.Hook(0, params) }
	}
	return autofit.Fit(t, r.cfg.Auto)
}
