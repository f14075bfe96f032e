// Package autofit drives the auto schedule (unlearn.Config.Schedule =
// "auto") through one training: the learning-rate range test on a probe of
// the retain set, then epochs, each annealed within itself and followed by
// the oracle-free proxies, until package autorule's stopping rule is met,
// keeping the state of the best epoch. It decides nothing itself (the
// rule's arithmetic is autorule's) and trains nothing itself: package
// unlearn's Runner supplies the training as a Training, and the schedule
// records into the run's schema.AutoSchedule and schema.ProxyLog.
package autofit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// streamProbe is the random stream (of the run's seed) that draws the
// range test's probe.
const streamProbe = 0x960b

// Training is the run the schedule drives.
type Training struct {
	Ctx    context.Context
	Engine *train.Engine
	// Split is the training split; Retain the retain examples the run
	// trains on (indices into Split), from which the probe is drawn.
	Split  *data.Split
	Retain []int
	// Rand returns the run's random stream number stream.
	Rand func(stream uint64) *rand.Rand
	// Optimizer returns a fresh optimizer (no momentum yet).
	Optimizer func() train.Optimizer
	// Epoch prepares epoch ep (0-based) and returns its number of steps
	// and the function that computes step s's gradients into the engine
	// and returns its loss.
	Epoch func(ep int) (int, func(s int) (float64, error), error)
	// Hook, if set, adjusts the gradients after a step.
	Hook func(params []*train.Param)
	// TrainEpoch trains epoch ep at learning rate lr, annealed within the
	// epoch if anneal, over the first fraction of its steps (see
	// autorule.Config.EpochFraction), and records its statistics.
	TrainEpoch func(ep int, lr float64, anneal bool, fraction float64) error
	// Measure computes the proxies of the engine's state after epoch ep
	// (1-based), trained at lr, appending them to Log.Epochs and setting
	// Log.After.
	Measure func(ep int, lr float64) error
	// Epochs is the cap; LR(ep) the algorithm's schedule of rates, which
	// the range test's choice scales by its ratio to BaseLR.
	Epochs int
	LR     func(ep int) float64
	BaseLR float64
	// RangeTest runs the range test (Config.LRs set); otherwise the rate
	// is BaseLR.
	RangeTest bool
	// Forget is the forget set's size.
	Forget int
	// Note adds a line to the run's notes; Progress reports a range-test
	// step (step of steps over rates candidates).
	Note     func(format string, args ...any)
	Progress func(step, steps, rates int, loss, lr float64)
	// Decided, if set, receives each epoch's proxies with the rule's
	// decision on them as soon as it is made.
	Decided func(schema.EpochProxies)
	// Log holds the proxies (Reference, Estimate, Before set); Result the
	// schedule's record (MaxEpochs set).
	Log    *schema.ProxyLog
	Result *schema.AutoSchedule

	probe []int
}

// snapshot is a copy of an engine's parameters and running statistics.
type snapshot struct {
	params  [][]float32
	running map[string][]float32
}

func saveState(e *train.Engine) snapshot {
	var s snapshot
	s.save(e)
	return s
}

// save copies e's state into s, reusing s's buffers.
func (s *snapshot) save(e *train.Engine) {
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

func (s snapshot) restore(e *train.Engine) {
	for i, p := range e.Params() {
		copy(p.Data, s.params[i])
	}
	for name, v := range s.running {
		if d := e.Running()[name]; d != nil {
			copy(d, v)
		}
	}
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
func (t *Training) probeLoss(e *train.Engine) (float64, error) {
	const batch = 128
	probe := t.probe
	var sum float64
	for at := 0; at < len(probe); at += batch {
		idx := probe[at:min(at+batch, len(probe))]
		if _, err := e.LoadBatch(t.Split, idx); err != nil {
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
		o := eval.Outputs{Logits: out.Logits, Labels: t.Split.Labels(idx), Classes: e.Classes()}
		for _, l := range eval.CrossEntropy(o) {
			sum += l
		}
	}
	return sum / float64(len(probe)), nil
}

// rangeTest runs the learning-rate range test (a's candidates, steps and
// slack) and returns the chosen rate; the engine's state is restored.
func (t *Training) rangeTest(a autorule.Config) (float64, error) {
	res := t.Result
	e := t.Engine
	start := time.Now()
	probe := t.Rand(streamProbe).Perm(len(t.Retain))
	probe = probe[:min(len(probe), 512)]
	for i, j := range probe {
		probe[i] = t.Retain[j]
	}
	sort.Ints(probe)
	t.probe = probe
	state := saveState(e)
	defer state.restore(e)
	steps, step, err := t.Epoch(0)
	if err != nil {
		return 0, err
	}
	k := min(a.RangeSteps, steps)
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i * steps / k
	}
	res.RangeSteps = k
	if res.StartLoss, err = t.probeLoss(e); err != nil {
		return 0, err
	}
	var lrs []float64
	lrs, res.LRCap = autorule.CapRates(a.LRs, a.RoundBudget, RoundSteps(steps, a.EpochFraction))
	total := k * len(lrs)
	for c, lr := range lrs {
		state.restore(e)
		opt := t.Optimizer()
		trial := schema.LRTrial{LR: lr}
		for i, s := range idx {
			if err := t.Ctx.Err(); err != nil {
				return 0, err
			}
			loss, err := step(s)
			if errors.Is(err, train.ErrNonFinite) {
				// A NaN or Inf loss or gradient at this rate is what a
				// range test looks for: the rate is past the usable range.
				trial.Diverged = true
				break
			} else if err != nil {
				return 0, fmt.Errorf("range test at lr %g: %w", lr, err)
			}
			if math.IsNaN(loss) || math.IsInf(loss, 0) || train.CheckFinite(e.Params()) != nil {
				trial.Diverged = true
				break
			}
			if t.Hook != nil {
				t.Hook(e.Params())
			}
			if err := opt.Step(e.Params(), lr); err != nil {
				return 0, err
			}
			if !finite(e.Params()) {
				trial.Diverged = true
				break
			}
			t.Progress(c*k+i+1, total, len(lrs), loss, lr)
		}
		if !trial.Diverged {
			loss, err := t.probeLoss(e)
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
	lr, ok := autorule.ChooseLR(res.RangeTest, a.RangeSlack)
	if !ok {
		rates := make([]string, len(lrs))
		for i, lr := range lrs {
			rates[i] = fmt.Sprintf("%.4g", lr)
		}
		return 0, setting.Textf("%w: every range-test learning rate diverged (%s): the loss or a gradient became "+
			"NaN or Inf within %d steps at each; give a fixed %s below %s, or check the model "+
			"and data (e.g. %s/%s)",
			train.ErrNonFinite, strings.Join(rates, ", "), k, setting.Of("lr"), rates[0],
			setting.Of("mean"), setting.Of("std"))
	}
	return lr, nil
}

// Fit runs the schedule under the rule a: the range test (t.RangeTest),
// then epochs until a's stopping rule is met or t.Epochs have run; the
// engine ends in the state of the epoch the rule names.
func Fit(t *Training, a autorule.Config) error {
	res := t.Result
	lr := t.BaseLR
	if t.RangeTest {
		var err error
		if lr, err = t.rangeTest(a); err != nil {
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
			capped = fmt.Sprintf(" (%d of %d candidates: at most %g rate-steps per round of %d steps, lr ≤ %.3g)",
				len(res.RangeTest), len(a.LRs), a.RoundBudget, int(math.Round(a.RoundBudget/res.LRCap)), res.LRCap)
		}
		t.Note("auto schedule: learning-rate range test%s, %d steps per candidate, retain probe loss (start %.4f) %s; "+
			"chose lr %g (largest within %g of the best)",
			capped, res.RangeSteps, res.StartLoss, strings.Join(parts, "; "), lr, a.RangeSlack)
	} else {
		t.Note("auto schedule: learning rate %g as given (no range test)", lr)
	}
	res.LR = lr
	res.UtilityBaseline, res.ForgetBaseline = a.UtilityBaseline, a.ForgetBaseline
	res.ForgetTolerance, res.UtilityTolerance = max(a.ForgetTolerance, 0), max(a.UtilityTolerance, 0)
	est := t.Log.Estimate
	switch a.UtilityBaseline {
	case autorule.UtilityMatched:
		res.UtilityTarget = t.Log.BeforeMatchedTest
	case autorule.UtilityHoldout:
		res.UtilityTarget = t.Log.Before.HoldoutAccuracy
	case autorule.UtilityTest:
		res.UtilityTarget = t.Log.Before.TestAccuracy
	default:
		res.UtilityTarget = est.TestAccuracy
	}
	targets := autorule.Targets{Utility: res.UtilityTarget}
	if a.ForgetBaseline == autorule.ForgetEstimate {
		targets.Forget, targets.ForgetSet = est.ReferenceAccuracy, true
		res.ForgetCeiling = &targets.Forget
		// An IID forget set is held against the estimate alone
		// (autorule.Targets.ForgetFixed), with the split allowance.
		targets.ForgetFixed = t.Log.Reference != nil && t.Log.Reference.IID && len(est.Partial) == 0
		res.ForgetFixed = targets.ForgetFixed
	}
	// Not when the forget set thins classes: there the estimate is already
	// an upper bound of the oracle's forget accuracy (it leaves out the
	// worse features of a class with fewer examples), and two standard
	// errors more would let a run stop far above the oracle.
	if a.ScaleForgetTolerance && len(est.Partial) == 0 {
		lvl := min(t.Log.Before.ReferenceAccuracy, est.ReferenceAccuracy)
		if noise := autorule.ForgetNoise(lvl, t.Forget, t.Log.Reference.NTest); noise > a.ForgetTolerance {
			a.ForgetTolerance = noise
			res.ForgetTolerance = noise
			t.Note("auto schedule: forget tolerance %.3f, two standard errors of a forget accuracy near %.3f measured on %d "+
				"forget and %d reference examples (wider than the default %.3f)",
				noise, lvl, t.Forget, t.Log.Reference.NTest, 0.01)
		}
	}
	if a.ScaleForgetTolerance && targets.ForgetFixed && a.SplitAllowance > 0 {
		a.ForgetTolerance += a.SplitAllowance
		res.ForgetTolerance, res.SplitAllowance = a.ForgetTolerance, a.SplitAllowance
		t.Note("auto schedule: IID forget set: forget accuracy held against the oracle estimate's %.3f, tolerance %.3f "+
			"including %.3f for unseen training examples scoring above the test split",
			targets.Forget, a.ForgetTolerance, a.SplitAllowance)
	}
	scale := lr / t.BaseLR
	var hist []schema.Proxies
	// best holds the state after the epoch of least violation so far: a
	// run that stops without meeting the rule returns that epoch.
	var best snapshot
	bestV := math.Inf(1)
	log := t.Log
	for ep := 0; ep < t.Epochs; ep++ {
		elr := t.LR(ep) * scale
		if err := t.TrainEpoch(ep, elr, !a.NoAnneal, a.EpochFraction); err != nil {
			return err
		}
		if err := t.Measure(ep+1, elr); err != nil {
			return err
		}
		hist = append(hist, log.After)
		d := a.Decide(targets, hist)
		v := a.Violation(targets, log.After)
		if d.Reason == autorule.StopNoProgress && res.PlateauCuts < a.PlateauCuts && ep+1 < t.Epochs &&
			a.ForgetMet(targets, hist[d.Epoch-1]) {
			// The best epoch forgot and only utility is short of its
			// target: back to that epoch, on at a lower rate, so that it
			// settles. (Where the forget set is still remembered, a lower
			// rate does not forget it: the run stops, and may widen.)
			res.PlateauCuts++
			scale *= a.PlateauFactor
			a.PatienceFrom = ep + 1
			if v > bestV {
				best.restore(t.Engine)
			}
			d.Stop, d.Reason = false, ""
			d.Detail += fmt.Sprintf("; instead, from epoch %d's state, the rate ×%g (cut %d of %d)", d.Epoch,
				a.PlateauFactor, res.PlateauCuts, a.PlateauCuts)
			t.Note("auto schedule: %s", d.Detail)
		}
		log.Epochs[len(log.Epochs)-1].Decision = &d
		if t.Decided != nil {
			t.Decided(log.Epochs[len(log.Epochs)-1])
		}
		if d.Stop {
			res.StopEpoch, res.Epoch, res.Reason, res.Detail = ep+1, d.Epoch, d.Reason, d.Detail
			if d.Epoch != ep+1 {
				best.restore(t.Engine)
				log.After = hist[d.Epoch-1]
			}
			break
		}
		if v < bestV {
			bestV = v
			best.save(t.Engine)
		}
	}
	t.Note("auto schedule: stopped after epoch %d of at most %d (%s): %s", res.StopEpoch, res.MaxEpochs, res.Reason,
		res.Detail)
	return nil
}

// RoundSteps is the steps of one round of an epoch of steps: the first
// ⌈fraction·steps⌉ with fraction in (0, 1) (autorule.Config.EpochFraction),
// else the whole epoch.
func RoundSteps(steps int, fraction float64) int {
	if fraction > 0 && fraction < 1 {
		return max(1, int(math.Ceil(fraction*float64(steps))))
	}
	return steps
}

// finite reports whether every parameter value is finite.
func finite(params []*train.Param) bool {
	for _, p := range params {
		for _, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return false
			}
		}
	}
	return true
}
