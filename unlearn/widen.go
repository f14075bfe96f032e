package unlearn

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// Widening: a model that memorized its training set keeps what it
// memorized of the forget set spread over more channels than a small mask
// resets, and finetuning the reset channels on the retain set relearns the
// forget examples from what the other channels still hold: the auto
// schedule's rule then stalls with the forget accuracy above the oracle
// estimate (a user's 61k-parameter CNN at 96.7 % train and 88.0 % test
// accuracy: 94.7 % against an estimate of 88.1 % at budget 0.1; budget 0.5
// reached the oracle's 86.7 %). When its own estimate says the forget set
// is still remembered, the run widens the mask to the next budget of
// Job.Widen and runs again from the input model, with a range test of its
// own, until the rule is met or the ladder ends. The
// wider mask is the same DEL ranking cut further (localize.DELMask), so it
// holds the smaller one.

// DefaultWiden is the ladder of budgets the default widens its mask along.
var DefaultWiden = []float64{0.3, 0.5}

// ParseWiden reads a ladder of budgets written "0.3,0.5": each in
// (above, 1] and larger than the one before (above is the run's budget).
func ParseWiden(s string, above float64) ([]float64, error) {
	var out []float64
	for i, f := range strings.Split(s, ",") {
		b, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(b > above && b <= 1) || (i > 0 && b <= out[i-1]) {
			return nil, setting.Errorf("widen", " %s: budgets in (%s %g, 1], each larger than the one before",
				s, setting.Of("budget"), above)
		}
		out = append(out, b)
	}
	return out, nil
}

// stillRemembers says how far (a fraction) a run under the auto schedule
// ended above its rule's forget target, when it stopped without meeting
// its rule (for lack of progress or at its cap) and the forget condition is
// the one unmet: more epochs at that mask did not forget, so a wider mask
// is what may.
func stillRemembers(res *Result) (float64, bool) {
	a, p := res.Auto, res.Proxies
	if a == nil || p == nil || a.Reason == "" || a.Reason == autorule.StopUnseen {
		return 0, false
	}
	target := p.After.ReferenceAccuracy
	if a.ForgetCeiling != nil && (a.ForgetFixed || *a.ForgetCeiling < target) {
		target = *a.ForgetCeiling
	}
	gap := p.After.ForgetAccuracy - target
	return gap, gap > a.ForgetTolerance
}

// widening is what Unlearn hands the ladder: the input model as it was
// read (each rung starts from it), the scores of the first localization
// and the options it ran with.
type widening struct {
	job      *Job
	suite    *eval.Suite
	pristine *graph.Model
	scores   map[string][]float64
	lo       localize.Options
	cfg      Config
	stage    string
	location string
	info     func(event, text string, fields ...any)
}

// run climbs the ladder from the first rung's result (p, mk, out) and
// returns the last rung's, with one schema.WidenStep per rung run.
func (w *widening) run(ctx context.Context, p *Prepared, mk *localize.Mask, out *Outcome,
	first float64) (*Prepared, *localize.Mask, *Outcome, []schema.WidenStep, error) {
	steps := []schema.WidenStep{widenStep(mk, out, first)}
	for _, b := range w.job.Widen {
		if b <= mk.Budget {
			continue
		}
		gap, ok := stillRemembers(out.Result)
		if !ok {
			break
		}
		steps[len(steps)-1].StillRemembers = gap
		fl := w.lo.DepthFloor
		if w.job.WidenFloor.Set {
			fl = w.job.WidenFloor.V
		}
		w.info("widen", fmt.Sprintf("widening the mask: at budget %g the forget set is still remembered "+
			"(forget accuracy %.2f%%, %.2f points above the rule's target after %s); "+
			"running again from the input model at budget %g, depth floor %g",
			mk.Budget, 100*out.Result.Proxies.After.ForgetAccuracy, 100*gap, out.Result.Auto.Reason, b, fl),
			"budget", mk.Budget, "next_budget", b, "next_depth_floor", fl,
			"forget_accuracy", out.Result.Proxies.After.ForgetAccuracy, "gap", gap)
		t0 := time.Now()
		m, err := onnxio.Clone(w.pristine)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		np, err := Prepare(m, w.job.ModelPath)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		np.DynamicBatch = p.DynamicBatch
		if !w.job.KeepFoldedBN {
			if err := np.RestoreFoldedBN(w.suite); err != nil {
				return nil, nil, nil, nil, err
			}
		}
		lo := w.lo
		lo.Budget, lo.DepthFloor = b, fl
		lo.Neurons = np.Neurons
		nmk, err := localize.DELMask(np.Neurons, w.scores, lo)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		// Each rung runs its own range test (unless the caller fixed the
		// rate): the first rung's choice, 0.3 on a 10 % reset, kept a 30 %
		// reset of a memorizing CNN 8 points under its oracle's test
		// accuracy (regimes/fashion-mnist-memorize).
		nout, err := np.execute(ctx, w.job.Algorithm, w.suite, nmk.Elements, w.job.Classifier, w.cfg, w.stage, w.location)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		p, mk, out = np, nmk, nout
		steps = append(steps, widenStep(mk, out, time.Since(t0).Seconds()))
	}
	return p, mk, out, steps, nil
}

func widenStep(mk *localize.Mask, out *Outcome, secs float64) schema.WidenStep {
	s := schema.WidenStep{Budget: mk.Budget, DepthFloor: mk.DepthFloor, Selected: mk.Selected, Seconds: secs,
		Epochs: len(out.Result.Epochs)}
	if a := out.Result.Auto; a != nil {
		s.Reason, s.Epoch = a.Reason, a.Epoch
	}
	if p := out.Result.Proxies; p != nil {
		s.ForgetAccuracy, s.TestAccuracy = p.After.ForgetAccuracy, p.After.TestAccuracy
	}
	return s
}

// canWiden says whether a run may widen its mask: the auto schedule on a
// mask that del computed here (not a mask file), with a ladder.
func (job *Job) canWiden(cfg Config, strategy string) bool {
	return len(job.Widen) > 0 && job.MaskPath == "" && strategy == "del" && cfg.Schedule == ScheduleAuto
}

// widenNote says in one line what each rung of a widening run did.
func widenNote(steps []schema.WidenStep) string {
	parts := make([]string, len(steps))
	for i, st := range steps {
		parts[i] = fmt.Sprintf("budget %g (depth floor %g): %d epochs, %s, forget accuracy %.2f%%, test %.2f%%, "+
			"%.0f s", st.Budget, st.DepthFloor, st.Epochs, st.Reason, 100*st.ForgetAccuracy, 100*st.TestAccuracy,
			st.Seconds)
		if st.StillRemembers > 0 {
			parts[i] += fmt.Sprintf(" (still remembered: %.2f points above the rule's target)", 100*st.StillRemembers)
		}
	}
	return "mask widened while the forget set was still remembered, each budget run from the input model: " +
		strings.Join(parts, "; then ")
}

// stillRemembersFlag is the warning of a run that widened its mask to the
// end of its ladder and still remembers the forget set: no cheaper step
// is left, so it advises retraining from scratch, with the run's own
// estimate of its cost when it has one.
func stillRemembersFlag(u *schema.Unlearning, res *Result) (flagNote, bool) {
	gap, ok := stillRemembers(res)
	if !ok {
		return flagNote{}, false
	}
	cost := setting.Msgf("its cost is not estimated here (%s N, the epochs the model was trained for, estimates it)",
		setting.Of("retrain-epochs"))
	if u.RetrainEstimateS > 0 {
		cost = setting.Msgf("it would take about %.0f s here (%d epochs, %s), %.1f× this run",
			u.RetrainEstimateS, u.RetrainEpochs, u.RetrainEstimateBasis, 1/max(u.Speedup, 1e-9))
	}
	return flagNote{schema.FlagStillRemembers, setting.Notef(setting.KindWarning, "the forget set is still "+
		"remembered with the mask widened to budget %g: forget accuracy %.2f%%, %.2f points above the rule's "+
		"target; no cheaper step is left, so retrain from scratch (%s): %s",
		u.Budget, 100*res.Proxies.After.ForgetAccuracy, 100*gap, setting.Use("method", "retrain"), cost)}, true
}
