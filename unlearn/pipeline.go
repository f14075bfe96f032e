package unlearn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/eval"
	"github.com/unlearn-tool/unlearn/eval/report"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/infer"
	"github.com/unlearn-tool/unlearn/internal/fsread"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/localize"
	"github.com/unlearn-tool/unlearn/onnxio"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// Job is one end-to-end unlearning run: the model file, the data and forget
// set (an eval.Suite, which also fixes how every model is measured), what
// to run, and where the results go. Zero fields take the defaults named
// on each; the command line fills a Job from its flags and config file.
type Job struct {
	// ModelPath is the input model; it is read and decoded once and never
	// written.
	ModelPath string
	// Suite holds the data, the forget set (its ForgetPath and indices) and
	// the evaluation options; it must have a forget set.
	Suite *eval.Suite
	// Method names the strategy + algorithm pair for the report (any of
	// Methods(), or "" when Strategy and Algorithm were chosen directly).
	Method string
	// Strategy and Budget localize (see localize.Strategies); MaskPath, when
	// set, reads a mask file (unlearn.mask/v1) instead.
	Strategy string
	Budget   float64
	MaskPath string
	// DepthFloor keeps del's localization away from the first layers
	// (localize.Options.DepthFloor; 0: every layer is eligible).
	// Recommended.DepthFloor is the default's.
	DepthFloor float64
	// Widen is the ladder of larger budgets a del run under the auto
	// schedule widens its mask along while the forget set is still
	// remembered (widen.go; DefaultWiden is the default's); nil: never.
	Widen []float64
	// WidenFloor, when set, is the depth floor of the wider rungs
	// (DepthFloor's meaning): a model that memorized keeps part of what it
	// remembers in the layers the first rung's floor protects, and a
	// lower floor lets a wider mask reach them (widen.go). Unset: each
	// rung keeps DepthFloor.
	WidenFloor Opt[float64]
	// Algorithm is a registered algorithm (Algorithms()); Config its
	// settings (Defaults(Algorithm) with the caller's changes).
	Algorithm string
	Config    Config
	// Classifier names the classifier layer when the detected one is wrong.
	Classifier string
	// OraclePath, when set, is a model retrained without the forget set:
	// the report then has Δ = oracle − unlearned.
	OraclePath string
	// Out is the unlearned model; MetricsPath metrics.json (required);
	// ReportPath the HTML report ("" for none).
	Out, MetricsPath, ReportPath string
	// RetrainEpochs, when positive, estimates the cost of retraining from
	// scratch for that many epochs, from full training steps timed on a
	// copy of the model (TimeRetrain) or, for an algorithm that trains
	// from scratch, from the run's own epochs. When 0, the model's
	// metadata (data.MetaTrainEpochs) supplies it if it has the key.
	RetrainEpochs int
	// retrainEpochsFrom is schema.RetrainEpochsMetadata when the model's
	// metadata gave RetrainEpochs; otherwise the caller set it.
	retrainEpochsFrom string
	// NoBefore skips evaluating the input model.
	NoBefore bool
	// AllowChance unlearns a model that scores near chance on the training
	// split (eval.NearChance). Without it such a run stops before
	// unlearning: the likeliest cause is data preprocessed unlike the
	// model's training (missing --mean/--std), and every number the run
	// would report is then meaningless.
	AllowChance bool
	// DynamicBatch writes the output with a symbolic batch dimension
	// (graph.MakeBatchSymbolic) when the input declares a fixed one; by
	// default the output keeps the input's declared shapes.
	DynamicBatch bool
	// KeepFoldedBN trains a model whose export folded BatchNormalization
	// into its convolutions as it is, without putting normalization back
	// for the run (Prepared.RestoreFoldedBN); for measuring what the
	// restoration does.
	KeepFoldedBN bool
	// BundledData says the suite's data is the bundled demo data, taken
	// for want of other data: only the bundled demo model
	// (BundledModelSHA256) runs on it.
	BundledData bool
	// DefaultOut says Out is the default beside the model, not the
	// caller's: an existing one is refused unless Overwrite. An Out the
	// caller names is replaced (atomically, as every output).
	DefaultOut, Overwrite bool
	// Tool names the program in metrics.json ("unlearn VERSION").
	Tool string
	// Info, when set, receives the run's steps: an event name, a line of
	// text and key, value pairs.
	Info func(event, text string, fields ...any)
	// Bar, when set, returns a progress callback for a labelled stage.
	Bar func(label string) func(done, total int)
	// Stage, when set, receives a line (event "stage") at the start of
	// each stage of the algorithm: the range test, every epoch, every
	// phase of the algorithms that do not train in epochs. A log with no
	// progress bar (stderr not a terminal) is then never silent for a
	// whole stage.
	Stage func(event, text string, fields ...any)
	// Terms words the settings that the run's notes, warnings and status
	// lines name, for metrics.json and Info (the command's terms: flags);
	// nil names them plainly (setting.Plain). The HTML report words them
	// for its reader (setting.Words).
	Terms setting.Terms
}

// terms is job.Terms, or setting.Plain.
func (job *Job) terms() setting.Terms {
	if job.Terms == nil {
		return setting.Plain
	}
	return job.Terms
}

// Outcome is what a run did: the report written to metrics.json (the
// unlearned model's metrics, the input's and the oracle's, the run's
// settings, log and audit), the algorithm's result and the audit.
type Outcome struct {
	Report *schema.Report
	Result *Result
	Audit  *schema.Audit
	// Note explains a deviation from "same graph, only initializers
	// changed" (untied parameters), or is empty.
	Note string
	// Notes say how the input was adapted for the run (a fixed batch made
	// symbolic in the working copies); metrics.json lists them.
	Notes []string
}

// ErrInterrupted is returned when the job's context is cancelled; nothing
// was written.
var ErrInterrupted = errors.New("interrupted; no output was written")

// Unlearn runs job: it loads and checks every input, evaluates the input
// model (and the oracle), localizes (or reads the mask), runs the algorithm
// on an untied working copy, audits that nothing outside the mask changed,
// evaluates the result, and writes the model, metrics.json and the report.
// The model is staged under a hidden name and renamed into place only after
// its metrics are written, so even a SIGKILL never leaves a model without
// its metrics under Out. On any error, cancellation included, no output is
// left behind. It runs in stages (stages.go): prepare, localize, run,
// measure, commit.
func Unlearn(ctx context.Context, job Job) (*Outcome, error) {
	r, err := prepare(ctx, job)
	if err != nil {
		return nil, err
	}
	if err := r.localize(ctx); err != nil {
		return nil, err
	}
	defer r.unstage()
	if err := r.run(ctx); err != nil {
		return nil, err
	}
	// From here on a failure leaves no model (unstage removes the staged
	// file): a model without its metrics is a partial output.
	if err := r.measure(ctx); err != nil {
		return nil, r.noModel(err)
	}
	if err := r.commit(ctx); err != nil {
		return nil, r.noModel(err)
	}
	r.tell()
	return r.out, nil
}

// progress returns the algorithm's progress callbacks: per step, the range
// test and the training each get a bar (Job.Bar) and every stage a
// starting line (Job.Stage); per epoch, its statistics as it ends (Job.Info,
// event "epoch") and, under the auto schedule, the rule's decision after it
// (Job.Stage, event "decision"), where a stop ends the training's bar at the
// work done. Each is nil when the job has nothing to report it to.
func (job *Job) progress(schedule string) (func(Progress), func(EpochEvent)) {
	var bar, rangeBar func(done, total int)
	last, done := "", 0
	var epoch func(EpochEvent)
	if job.Info != nil || job.Stage != nil || job.Bar != nil {
		epoch = func(e EpochEvent) {
			if ep := e.Stats; ep != nil && job.Info != nil {
				job.Info("epoch", fmt.Sprintf("epoch %d  loss %.4f  acc %.2f%%  %.1fs", ep.Epoch, ep.Loss,
					100*ep.Accuracy, ep.Seconds), "epoch", ep.Epoch, "loss", ep.Loss, "accuracy", ep.Accuracy,
					"seconds", ep.Seconds)
			}
			if e.Decided == nil || e.Decided.Decision == nil {
				return
			}
			if job.Stage != nil {
				text, fields := decisionEvent(e.Decided)
				job.Stage("decision", text, fields...)
			}
			if e.Decided.Decision.Stop && bar != nil {
				bar(done, done)
			}
		}
	}
	if job.Bar == nil && job.Stage == nil {
		return nil, epoch
	}
	return func(p Progress) {
		// A stage is the range test, an epoch (scrub's max and min
		// phases are parts of one), or a phase outside epochs.
		stage := p.Phase
		if p.Epoch > 0 {
			stage = fmt.Sprintf("epoch %d", p.Epoch)
		}
		if stage != last && job.Stage != nil {
			last = stage
			switch {
			case p.Phase == "lr-range" && p.Rates > 0:
				job.Stage("stage", fmt.Sprintf("range test: %d rates × %d steps", p.Rates, p.Steps/p.Rates),
					"stage", "lr-range", "rates", p.Rates, "steps", p.Steps/p.Rates)
			case p.Epoch > 0:
				of := "of"
				if schedule == ScheduleAuto {
					of = "of at most"
				}
				job.Stage("stage", fmt.Sprintf("epoch %d %s %d: %d steps, lr %.4g", p.Epoch, of, p.Epochs, p.Steps, p.LR),
					"stage", "epoch", "epoch", p.Epoch, "epochs", p.Epochs, "steps", p.Steps, "lr", p.LR)
			default:
				job.Stage("stage", fmt.Sprintf("%s: %s, %d steps", p.Algorithm, p.Phase, p.Steps),
					"stage", p.Phase, "steps", p.Steps)
			}
		}
		if job.Bar == nil || p.Steps <= 0 {
			return
		}
		if p.Phase == "lr-range" {
			if rangeBar == nil {
				rangeBar = job.Bar("range test")
			}
			rangeBar(p.Step, p.Steps)
			return
		}
		if bar == nil {
			bar = job.Bar(job.Algorithm)
		}
		done = max(p.Epoch-1, 0)*p.Steps + p.Step
		bar(done, max(p.Epochs, 1)*p.Steps)
	}, epoch
}

// decisionEvent is the line and the fields of the auto schedule's decision
// after an epoch: go on or stop, why, and the proxies it rests on.
func decisionEvent(e *schema.EpochProxies) (string, []any) {
	d := e.Decision
	text := "auto schedule: go on: " + d.Detail
	if d.Stop {
		text = fmt.Sprintf("auto schedule: stop (%s): %s", d.Reason, d.Detail)
	}
	return text, []any{"epoch", e.Epoch, "stop", d.Stop, "reason", d.Reason, "result_epoch", d.Epoch,
		"forget_ok", d.ForgetOK, "utility_ok", d.UtilityOK, "detail", d.Detail, "lr", e.LR,
		"forget_accuracy", e.ForgetAccuracy, "test_accuracy", e.TestAccuracy, "proxies", e.Proxies}
}

// nearChance refuses an input model that scores near chance on the
// training split: from its "before" evaluation, else from the
// preprocessing check's sample (sample, its accuracy as given: the
// examples of eval.Suite.TrainAccuracySample).
func nearChance(s *eval.Suite, before *eval.Metrics, sample float64) error {
	acc := sample
	if before != nil {
		acc = before.Accuracy.Train
	}
	if msg := eval.NearChance(acc, s.Data); msg != nil {
		return setting.Textf("%s; or pass %s to unlearn it anyway", msg, setting.Of("allow-chance"))
	}
	return nil
}

// checkPreprocessing runs the preprocessing check
// (eval.Suite.CheckPreprocessing) on the input model: where another
// preprocessing scores eval.FarBetter more on a sample of the training
// split, the run is refused (ErrSettings: the command's usage exit code)
// with one line naming the fix, or, with allowChance, warned about and
// run. path names the model in errors; fromMetadata says the suite's
// normalization came from the model's metadata. It returns the model's accuracy on the sample as given.
func checkPreprocessing(s *eval.Suite, m *graph.Model, path string, fromMetadata, allowChance bool,
	info func(string, string, ...any)) (float64, error) {
	from := ""
	switch {
	case fromMetadata:
		from = "metadata"
	case len(s.Data.Mean) > 0 || len(s.Data.Std) > 0:
		from = "settings"
	}
	res, err := s.CheckPreprocessing(m, from)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err) // as Suite.Evaluate's: a model the data cannot feed
	}
	// A check that passes prints nothing: a refused run's stderr stays its
	// one error line.
	given := res.Alternatives[0]
	f := res.Finding
	if f == nil {
		return given.Accuracy, nil
	}
	if allowChance {
		terms := s.Terms
		if terms == nil {
			terms = setting.Plain
		}
		warning := setting.Msgf("%s (run anyway: %s)", f.Message(), setting.Of("allow-chance")).Render(terms)
		info("warning", "warning: "+warning,
			"kind", f.Kind, "setting", f.Setting, "suggest", f.Suggest,
			"accuracy", f.Given, "better", f.Better)
		return given.Accuracy, nil
	}
	return 0, fmt.Errorf("%w: %w", ErrSettings, f.Err())
}

// MaxTestDrop is how far (a fraction: 0.05 = 5 points) the result's test
// accuracy may fall below the input model's before the run warns. Forgetting
// costs some utility (the oracle, retrained without the forget set, scores
// a point or two below the input on the demo's non-IID forget set) and a
// test split of 1,000 examples measures accuracy near 80 % to about ±1.3
// points (one standard error); a drop of more than 5 points is neither, but
// damage: a recipe that reset too much or trained too little.
const MaxTestDrop = 0.05

// testDropNote is the warning for a result whose test accuracy is more than
// MaxTestDrop below the input model's (from the "before" evaluation, else
// from the proxies' baseline), or below the oracle estimate's when that is
// lower (forgetting a class costs its share of the test split), ending
// with advice; or nil.
func testDropNote(before, after *eval.Metrics, proxies *schema.ProxyLog, advice setting.Message) *setting.Note {
	var in float64
	switch {
	case before != nil:
		in = before.Accuracy.Test
	case proxies != nil && proxies.Before.TestAccuracy > 0:
		in = proxies.Before.TestAccuracy
	default:
		return nil
	}
	out := after.Accuracy.Test
	if proxies != nil && proxies.Estimate != nil && proxies.Estimate.TestAccuracy < in {
		// What forgetting itself costs: an oracle is estimated to score
		// less than the input (a class removed entirely is never
		// predicted), and only a drop below that is damage.
		est := proxies.Estimate.TestAccuracy
		if est-out <= MaxTestDrop {
			return nil
		}
		n := setting.Notef(setting.KindWarning, "test accuracy fell from %.2f%% (input model) to %.2f%%, %.1f points "+
			"below the %.2f%% an oracle is estimated to score (more than %g): %s",
			100*in, 100*out, 100*(est-out), 100*est, 100*MaxTestDrop, advice)
		return &n
	}
	if in-out <= MaxTestDrop {
		return nil
	}
	n := setting.Notef(setting.KindWarning, "test accuracy fell from %.2f%% (input model) to %.2f%%, %.1f points "+
		"(more than %g): %s", 100*in, 100*out, 100*(in-out), 100*MaxTestDrop, advice)
	return &n
}

// testDropAdvice ends the test-drop warning of an unlearning algorithm.
var testDropAdvice = setting.Msgf("the run damaged the model beyond what forgetting costs; "+
	"try the auto schedule (no %s/%s), a smaller %s, or more epochs",
	setting.Of("epochs"), setting.Of("lr"), setting.Of("lr"))

// recipeSettings are the settings of a training recipe, as the advice to
// give the model's own names them.
var recipeSettings = setting.Msgf("%s, %s, %s, %s",
	setting.Of("epochs"), setting.Of("lr"), setting.Of("weight-decay"), setting.Of("augment"))

// ResolutionForget is the forget-set size under which one example is more
// than a point of forget accuracy: a run on a smaller forget set warns
// (schema.FlagForgetResolution) instead of vouching, since a point is
// below what its forget accuracy can measure.
const ResolutionForget = 100

// ResolutionPoint is the distance from an oracle's forget accuracy that a
// vouched run claims (one point, as the suite's "miss"). A forget set on
// which two standard errors of a forget accuracy near the oracle
// estimate's exceed it (autorule.ForgetSpread) cannot back that claim, however the
// run went: the oracle's own forget accuracy on those examples scatters
// that much around what any oracle-free signal can predict. On the
// realistic regime's 600-example IID sets (accuracy near 0.928, two
// standard errors 2.1 points) the three oracles scored 0.65–1.37 points
// above the estimate, and the default, its rule met, ended 1.50 points
// under the 1.37 one's forget accuracy; on the 6,000-example sets
// (0.7–0.8 points) the oracles lay 0.3–1.0 above it and every default run
// landed within a point (regimes/fashion-mnist-realistic,
// regimes/fashion-mnist-default).
const ResolutionPoint = 0.01

// EstimateBias lists how far (points) the oracles' forget accuracy lay
// below the oracle estimate's on forget sets that thin classes without
// removing them (schema.OracleEstimate.Partial), by how many training
// examples the thinned classes kept, measured on the suite of regimes
// (README "Which method", regimes/*/RESULTS.md "Flag against miss").
// The estimate accounts for a thinned class's smaller share of the data
// but not for the worse features a model retrained on fewer of its
// examples learns, so it lies above the oracles: by 0.2–7.9 points where
// 200 examples were kept (estimate − oracle per run: small ResNet +1.7,
// +3.5, +2.5; small VGG +3.5, +2.9, +0.2; the demo +7.9), and still by
// 0.4–1.2 where 3,000 were kept (full Fashion-MNIST, the current default,
// regimes/fashion-mnist-default: +0.36, +1.19, +1.02), where the
// default ended 1.03, 1.42 and 0.97 points above the oracle's forget
// accuracy and, before this warning covered it, vouched for the first
// two. So every run on such a forget set raises the estimate-bias
// warning, whatever the classes kept: none measured was free of the bias.
var EstimateBias = []BiasPoint{
	{Kept: 200, Min: 0.2, Max: 7.9, Where: "the small-data ResNet and VGG, 3 seeds each, and the bundled demo"},
	{Kept: 3000, Min: 0.4, Max: 1.2, Where: "full Fashion-MNIST, 3 seeds"},
}

// BiasPoint is one measured range of the estimate's bias: Min to Max
// points where the thinned classes kept Kept training examples, on Where.
type BiasPoint struct {
	Kept     int
	Min, Max float64
	Where    string
}

// MIADisagreement is how far (a fraction: 0.10 = 10 points) the proxy MIA's
// verdict on the forget set may lie from its verdict on the unseen
// reference while forget accuracy says the forget set looks unseen, before
// the run says its signals disagree. Two oracles retrained with other
// seeds differ from each other by up to 6.7 MIA points in this project's
// measurements (regimes/fashion-mnist/oracle-noise), so a gap above
// 10 is more than retraining's own noise.
const MIADisagreement = 0.10

// verdictWarnings are the warnings a run's own signals call for, so that
// it never reports a success it cannot back (issue 30): the auto schedule
// stopped without meeting its conditions (at its cap or for lack of
// progress; the result is the epoch closest to them, not one the proxies
// vouch for), or forget accuracy meets the rule's forget condition (at
// most the unseen reference's plus the tolerance) while the proxy MIA
// tells the forget set from the reference.
func verdictWarnings(u *schema.Unlearning, oracle bool, nForget int) []flagNote {
	var out []flagNote
	warn := func(kind, format string, a ...any) {
		out = append(out, flagNote{kind, setting.Notef(setting.KindWarning, format, a...)})
	}
	check := setting.Msgf("compare with an oracle (%s) or check the numbers above before relying on it",
		setting.Of("oracle"))
	if oracle {
		check = setting.Msgf("the oracle's column above is the check")
	}
	if a := u.Auto; a != nil && a.Reason != autorule.StopUnseen && a.Reason != "" {
		why := "reached its cap of " + textio.Count(a.MaxEpochs, "epoch")
		if a.Reason == autorule.StopNoProgress {
			why = "stopped for lack of progress"
		}
		warn(schema.FlagRuleNotMet, "the auto schedule %s without meeting its conditions (%s): the result is not one "+
			"the proxies vouch for; %s", why, a.Detail, check)
	}
	if p := u.Proxies; p != nil && p.Estimate != nil && len(p.Estimate.Partial) > 0 {
		e := p.Estimate
		var measured []string
		for _, b := range EstimateBias {
			measured = append(measured, fmt.Sprintf("%.1f to %.1f points where they kept %s examples (%s)", b.Min, b.Max,
				thousands(b.Kept), b.Where))
		}
		warn(schema.FlagEstimateBias, "the forget set thins classes %v without removing them (the smallest keeps "+
			"%s training examples): the oracle estimate (forget accuracy %.2f%%) "+
			"accounts for their smaller share of the data, not for the worse features a "+
			"model retrained on fewer of their examples learns, so it lies above an "+
			"oracle's forget accuracy: measured, by %s; this run's forget accuracy "+
			"(%.2f%%) may lie that far above an oracle's, so the run cannot vouch that "+
			"it forgot enough; %s",
			e.Partial, thousands(e.PartialKept), 100*e.ReferenceAccuracy, strings.Join(measured, ", and by "),
			100*p.After.ForgetAccuracy, check)
	}
	resolutionWarning(u, nForget, check, warn)
	if p := u.Proxies; p != nil && p.After.MIA != nil {
		a := p.After
		tol := 0.01
		if u.Auto != nil && u.Auto.ForgetTolerance > 0 {
			tol = u.Auto.ForgetTolerance
		}
		if a.ForgetGap <= tol && math.Abs(a.MIA.Forget-a.MIA.Reference) > MIADisagreement {
			warn(schema.FlagProxiesDisagree, "the proxies disagree: forget accuracy %.2f%% says the forget set looks "+
				"unseen (reference %.2f%%), but the proxy MIA (%s) calls %.2f%% of the "+
				"forget set non-member against %.2f%% of the reference (more than %g "+
				"points apart): the forget set may still be told apart from unseen "+
				"examples; the run cannot vouch that it is forgotten",
				100*a.ForgetAccuracy, 100*a.ReferenceAccuracy, a.MIA.Feature, 100*a.MIA.Forget, 100*a.MIA.Reference,
				100*MIADisagreement)
		}
	}
	return out
}

// resolutionWarning warns (through warn, as verdictWarnings) about a forget
// set too small for the verdict the run would give: one that cannot
// resolve the verdict's stated tolerances (u.Tolerances), or, without
// them, one on which a forget accuracy is known to less than the point a
// vouched run claims (ResolutionForget, ResolutionPoint). check ends the
// warning.
func resolutionWarning(u *schema.Unlearning, nForget int, check setting.Message,
	warn func(kind, format string, a ...any)) {
	if t := u.Tolerances; t != nil {
		// The verdict states its tolerances (setTolerances): only a set
		// that cannot resolve their cap is warned about.
		if !t.Resolved {
			warn(schema.FlagForgetResolution, "no verdict: the forget set has %d examples, which resolve a forget "+
				"accuracy near %.2f%% only to ±%.1f points (two standard errors), and a verdict claims at most "+
				"±%g; only the numbers above count", nForget, 100*t.ForgetLevel,
				100*tolerance(ForgetToleranceK, t.ForgetLevel, nForget), 100*t.Cap)
		}
	} else if p := u.Proxies; p != nil && p.Reference != nil && nForget > 0 && nForget < ResolutionForget {
		noise := autorule.ForgetNoise(p.After.ReferenceAccuracy, nForget, p.Reference.NTest)
		warn(schema.FlagForgetResolution, "the forget set has %d examples, so one of them is %.1f points of forget "+
			"accuracy and the comparison with unseen examples is known to about "+
			"±%.1f points (two standard errors): the run cannot tell whether it "+
			"lands within a point of an oracle's forget accuracy; on the suite's "+
			"40-example sets the default ended up to 5 points from the oracle's; %s",
			nForget, 100/float64(nForget), 100*noise, check)
	} else if p != nil && nForget >= ResolutionForget && (p.Estimate == nil || len(p.Estimate.Partial) == 0) {
		// A set that thins classes is flagged for the estimate's bias
		// (verdictWarnings), which is the larger doubt there.
		lvl := p.After.ReferenceAccuracy
		if p.Estimate != nil {
			lvl = p.Estimate.ReferenceAccuracy
		}
		if spread := autorule.ForgetSpread(lvl, nForget); spread > ResolutionPoint {
			warn(schema.FlagForgetResolution, "the forget set has %s examples: an oracle's forget accuracy on them "+
				"scatters by about ±%.1f points (two standard errors of an accuracy "+
				"near %.2f%%) around what the run can estimate without one, more than "+
				"the %g point it would vouch for; on the suite's 600-example sets the "+
				"oracles scored up to 1.4 points above the estimate and the default, "+
				"its rule met, ended 1.5 points under one oracle's forget accuracy; %s",
				thousands(nForget), 100*spread, 100*lvl, 100*ResolutionPoint, check)
		}
	}
}

// autoDropAdvice ends the test-drop warning of a run under the auto
// schedule.
var autoDropAdvice = setting.Msgf("the run damaged the model beyond what forgetting costs, and the auto schedule "+
	"did not recover it; try a smaller %s, more %s, or another %s (e.g. finetune), and check the notes above for "+
	"the model's form", setting.Of("budget"), setting.Of("max-epochs"), setting.Of("method"))

// check refuses a job that cannot run, before anything is read.
func (job *Job) check() error {
	switch {
	case job.Suite == nil || job.Suite.Data == nil:
		return fmt.Errorf("%w: the job has no data", ErrInput)
	case job.Suite.ForgetPath == "":
		return fmt.Errorf("%w: the job has no forget set", ErrInput)
	case job.Out == "" || job.MetricsPath == "":
		return fmt.Errorf("%w: the job needs an output model and a metrics path", ErrInput)
	}
	if err := job.checkInputs(); err != nil {
		return err
	}
	if len(job.Suite.Retain) == 0 {
		return fmt.Errorf("%s: the ids cover the whole training split (%d examples); nothing would be left to keep, "+
			"retrain from scratch instead", job.Suite.ForgetPath, job.Suite.Data.Train.Len())
	}
	a, err := LookupAlgorithm(job.Algorithm)
	if err != nil {
		return err
	}
	if a.FromScratch && (job.Strategy != "full" || job.MaskPath != "") {
		return errRetrainMask(job.Algorithm)
	}
	if job.MaskPath != "" && job.DepthFloor != 0 {
		return fmt.Errorf("%w: a depth floor and a mask file: the mask already fixes the parameters", ErrInput)
	}
	if err := CheckDepthFloor(job.DepthFloor, job.Strategy); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	return CheckSettings(job.Algorithm, job.Config, job.Suite.Data, len(job.Suite.Retain))
}

// ErrSettings marks an ErrInput that the run's settings (a command's flags)
// cause given its data; commands exit with their usage code on it.
var ErrSettings = fmt.Errorf("%w", ErrInput)

// CheckSettings refuses, before any work, settings that the data makes
// useless: a crop padding larger than half the images' side, and an auto
// schedule round (EpochFraction of the retain set, less the proxies'
// held-out slice of at most 5 %) smaller than one batch.
func CheckSettings(algorithm string, cfg Config, d *data.Dataset, retain int) error {
	if a, err := LookupAlgorithm(algorithm); err == nil && a.Augments && d != nil && d.Train != nil {
		sh := d.Train.Shape()
		if err := cfg.Augment.CheckImage(sh[1], sh[2]); err != nil {
			return fmt.Errorf("%w: %w", ErrSettings, err)
		}
	}
	if f, n := cfg.Auto.EpochFraction, float64(retain)*0.95; f > 0 && f*n < float64(max(cfg.BatchSize, 1)) {
		return fmt.Errorf("%w: %w", ErrSettings, setting.Errorf("epoch-fraction", " %g of the %d-example retain set is "+
			"%.3g examples a round; a round needs at least one batch (%d): give at least %.2g",
			f, retain, f*n, cfg.BatchSize, float64(cfg.BatchSize)/n))
	}
	return nil
}

// needsRetrainTiming says whether the run needs full training steps timed
// (TimeRetrain) for an estimate of retraining: for --retrain-epochs'
// estimate, or for the note that retraining may be cheaper, which every
// run that trains in epochs over known examples gets. A run that
// retrained from scratch is its own measurement.
func (job *Job) needsRetrainTiming(res *Result) bool {
	a, err := LookupAlgorithm(job.Algorithm)
	if err != nil || a.FromScratch {
		return false
	}
	return job.RetrainEpochs > 0 || (a.EpochExamples != nil && len(res.Epochs) > 0)
}

// section describes the run for metrics.json. The retraining estimate
// rests on rt, full training steps timed on the run's model, batch size,
// threads and data (nil: none timed), or, for an algorithm that trains
// from scratch, on the run's own seconds per trained example, which needs
// epochs that are passes over known examples (Algorithm.EpochExamples).
// It returns the run's notes apart, for Job.Terms to word (runNotes).
func (job *Job) section(strategy string, budget float64, cfg Config, o *Outcome, maskInfo *schema.MaskSummary,
	tm schema.UnlearningTimings, rt *RetrainTiming) (*schema.Unlearning, []setting.Note) {
	// The settings the run used: the job's, with the algorithm's defaults
	// in the zero fields the report shows.
	u := &schema.Unlearning{Method: job.Method, Strategy: strategy, Algorithm: job.Algorithm, Budget: budget,
		Epochs: cfg.Epochs, LR: cfg.LR, Schedule: ScheduleFixed, Proxies: o.Result.Proxies,
		BatchSize: cfg.BatchSize, Momentum: cfg.Momentum,
		WeightDecay: cfg.WeightDecay, Seed: cfg.Seed, Mask: maskInfo, Audit: o.Audit, Timings: tm,
		Log: &schema.RunLog{Epochs: o.Result.Epochs, Reset: o.Result.Reset}}
	var notes []setting.Note
	note := func(n string) { notes = append(notes, setting.Notef(setting.KindNote, "%s", n)) }
	if o.Note != "" {
		note(o.Note)
	}
	if a, err := LookupAlgorithm(job.Algorithm); err == nil && a.Augments && cfg.Augment.On() {
		u.Augment = cfg.Augment.String()
	}
	for _, n := range o.Notes {
		note(n)
	}
	// An algorithm's warnings (an empty mask, a reset that empties early
	// layers) and retrain's account of what it did are kept beside the
	// run's other notes, not only in its log.
	for _, n := range o.Result.Notes {
		if n.Kind == setting.KindWarning || strings.HasPrefix(n.String(), exactNote) {
			notes = append(notes, n)
		}
	}
	if a := o.Result.Auto; a != nil {
		u.Schedule, u.Auto, u.Epochs, u.LR = ScheduleAuto, a, a.StopEpoch, a.LR
	}
	if n := job.costs(u, cfg, o, tm, rt); n != nil {
		notes = append(notes, *n)
	}
	return u, notes
}

// costs fills u's account of what the run cost: the examples and epochs it
// trained, and the estimate of retraining from scratch (see section). It
// returns the note for a run that retraining would have beaten
// (cheaperRetrainNote), or nil.
func (job *Job) costs(u *schema.Unlearning, cfg Config, o *Outcome, tm schema.UnlearningTimings,
	rt *RetrainTiming) *setting.Note {
	nRetain, nForget := len(job.Suite.Retain), len(job.Suite.Forget)
	trained := nRetain // the retain examples the run trained on
	if o.Result.Proxies != nil {
		trained -= o.Result.Proxies.HoldoutSize
	}
	perEpoch := 0 // examples one epoch of the algorithm trains on
	a, _ := LookupAlgorithm(job.Algorithm)
	if a != nil && a.EpochExamples != nil {
		perEpoch = a.EpochExamples(trained, nForget)
	}
	if f := cfg.Auto.EpochFraction; o.Result.Auto != nil && f > 0 && f < 1 {
		perEpoch = int(math.Round(f * float64(perEpoch))) // each round trains that share
	}
	var sec float64
	for _, ep := range o.Result.Epochs {
		sec += ep.Seconds
	}
	perExample := 0.0 // seconds per trained example
	if perEpoch > 0 && len(o.Result.Epochs) > 0 && sec > 0 {
		perExample = sec / float64(len(o.Result.Epochs)*perEpoch)
	}
	runS := tm.LocalizeS + tm.UnlearnS
	if perExample > 0 && nRetain > 0 {
		// The run's cost in epochs over the retain set: by examples
		// trained, and by seconds at its own training speed.
		n := len(o.Result.Epochs) * perEpoch
		if a := o.Result.Auto; a != nil {
			n += a.RangeSteps * len(a.RangeTest) * cfg.BatchSize
		}
		u.ExamplesTrained = n
		u.EpochsTrained = float64(n) / float64(nRetain)
		u.EpochsEquivalent = runS / (perExample * float64(nRetain))
	}
	// estimate is the seconds retraining from scratch on the retain set
	// would take for epochs.
	var estimate func(epochs int) float64
	switch {
	case a != nil && a.FromScratch && perExample > 0:
		b := max(cfg.BatchSize, 1)
		steps := len(o.Result.Epochs) * ((perEpoch + b - 1) / b)
		rt = &RetrainTiming{Basis: schema.RetrainBasisRun, Steps: steps, StepS: sec / float64(max(steps, 1)),
			BatchSize: cfg.BatchSize}
		estimate = func(epochs int) float64 { return perExample * float64(nRetain*epochs) }
	case rt != nil:
		estimate = func(epochs int) float64 { return rt.Seconds(nRetain, epochs) }
	}
	if rt != nil {
		u.RetrainEstimateBasis, u.RetrainStepS = rt.Basis, rt.StepS
		if rt.Basis == schema.RetrainBasisTimed {
			u.RetrainStepsTimed, u.Timings.RetrainTimingS = rt.Steps, rt.CostS
		}
	}
	from := job.retrainEpochsFrom
	if from == "" && job.RetrainEpochs > 0 {
		from = schema.RetrainEpochsFlag
	}
	if job.RetrainEpochs > 0 && estimate != nil {
		u.RetrainEpochs, u.RetrainEpochsFrom = job.RetrainEpochs, from
		u.RetrainEstimateS = estimate(job.RetrainEpochs)
		u.Speedup = u.RetrainEstimateS / runS
	}
	if estimate != nil && a != nil && !a.FromScratch && (job.RetrainEpochs > 0 || perExample > 0) {
		epochs := job.RetrainEpochs
		if epochs <= 0 {
			epochs = TrainEpochs
		}
		return cheaperRetrainNote(estimate(epochs), epochs, from, runS, report.RetrainBasis(u))
	}
	return nil
}

// cheaperRetrainNote is the note for a run that took longer (runS: its
// localization and unlearning) than retraining from scratch would
// (estimateS, for epochs over the retain set; basis says what the estimate
// rests on, report.RetrainBasis), or "". from says where epochs came
// from: the user (schema.RetrainEpochsFlag, --retrain-epochs), the
// model's metadata (schema.RetrainEpochsMetadata), both the epochs the
// model was trained for, or "": assumed, the retrain method's default
// (TrainEpochs, the train command's). It advises the retrain method
// (setting.KindAdvice), or returns nil.
func cheaperRetrainNote(estimateS float64, epochs int, from string, runS float64, basis string) *setting.Note {
	if !(estimateS > 0) || estimateS >= runS {
		return nil
	}
	retrain := setting.Use("method", "retrain")
	if from != "" {
		n := setting.Notef(setting.KindAdvice, "retraining is cheaper here: retraining from scratch on the retain set "+
			"for %s (%s) would take about %.0f s (%s), less than this run's %.0f s (localize and unlearn); %s does that, "+
			"exact unlearning, with the model's training recipe (%s and its %s, %s, %s)",
			textio.Count(epochs, "epoch"), report.RetrainEpochsFrom(from), estimateS, basis, runS, retrain,
			setting.Use("epochs", epochs), setting.Of("lr"), setting.Of("weight-decay"), setting.Of("augment"))
		return &n
	}
	n := setting.Notef(setting.KindAdvice, "retraining may be cheaper here: retraining from scratch on the retain set "+
		"for %s (assumed: %s's default, the train command's; %s gives the epochs the model was trained for) would take "+
		"about %.0f s (%s), less than this run's %.0f s (localize and unlearn); if the model trains in that few epochs, "+
		"%s is exact unlearning at lower cost (with the model's recipe: %s)",
		textio.Count(epochs, "epoch"), retrain, setting.Use("retrain-epochs", "N"), estimateS, basis, runS, retrain,
		recipeSettings)
	return &n
}

// Prepared is a decoded model ready for unlearning: the original (written
// back into) and an untied working copy with its neuron map.
type Prepared struct {
	Orig, Work *graph.Model
	// Untied counts the parameters untying split apart.
	Untied  int
	Neurons *graph.NeuronMap
	// Notes say how the working copy differs from the input besides
	// untying and what about the input makes unlearning harder
	// (infer.InputNotes).
	Notes []string
	// Path is the file the model was read from; the output never
	// replaces it.
	Path string
	// DynamicBatch writes the result with a symbolic batch (Job.DynamicBatch).
	DynamicBatch bool
	// restored are the BatchNormalization nodes RestoreFoldedBN put back
	// into Work, folded again before the result is written.
	restored []graph.RestoredBN
	// graph is Work's training graph for localization
	// (localize.GraphOptions), which Prepare builds as its check; it is
	// handed to localization once (takeGraph) and dropped when Work
	// changes (RestoreFoldedBN).
	graph *autodiff.Artifacts
}

// takeGraph returns the training graph Prepare built for Work and lets go
// of it: one localization runs on it, and the memory it holds is freed
// after.
func (p *Prepared) takeGraph() *autodiff.Artifacts {
	g := p.graph
	p.graph = nil
	return g
}

// RestoreFoldedBN gives a model whose export folded BatchNormalization
// into its convolutions (graph.DetectFoldedBN) trainable normalization
// back for the run: after each folded convolution of the working copy a
// BatchNormalization initialised to the identity from the convolution's
// output statistics on up to 2,048 retain examples (graph.RestoreBN), whose
// channels belong to the convolution's neurons (localized, reset and
// trained with them). The result is folded back before it is written
// (graph.FoldBackBN), every channel with its trained normalization and
// running statistics, so the output has the input's graph; channels
// outside the mask change only by their statistics (Audit.FoldedStatistics).
// Measured in regimes/folded-bn:
// without it the default collapsed on a folded CNN; with it it landed where
// the same model exported with BatchNormalization kept lands. It does
// nothing for other models.
func (p *Prepared) RestoreFoldedBN(s *eval.Suite) error {
	f := graph.DetectFoldedBN(p.Work.Graph)
	if f == nil {
		return nil
	}
	retain := s.Retain
	step := max(1, len(retain)/2048)
	var idx []int
	for i := 0; i < len(retain) && len(idx) < 2048; i += step {
		idx = append(idx, retain[i])
	}
	names := make([]string, len(f.Nodes))
	for i, n := range f.Nodes {
		names[i] = n.Output(0).Name
	}
	mean, variance, err := infer.ChannelStats(p.Work, names, s.Data.Train, idx, s.Options.Runtime, 256)
	if err != nil {
		return fmt.Errorf("%s: statistics for the restored BatchNormalization: %w", p.Path, err)
	}
	if p.restored, err = graph.RestoreBN(p.Work.Graph, f.Nodes, mean, variance); err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	p.graph = nil // built for the graph without the restored normalization
	if p.Neurons, err = graph.Neurons(p.Work.Graph); err != nil {
		return fmt.Errorf("%s: %w", p.Path, err)
	}
	p.Notes = append(p.Notes, fmt.Sprintf("trainable BatchNormalization restored for the run after the %d folded "+
		"convolution(s), identity-initialised from their output statistics on %d retain examples; "+
		"folded back on write with every channel's trained statistics, so the convolutions' channels outside the mask "+
		"change by a per-channel scale and shift, the state a model with BatchNormalization keeps in its running "+
		"statistics (audit: folded_statistics; the audit's parameter counts include the restored normalization)",
		f.Convs, len(idx)))
	return nil
}

// foldBack folds the restored BatchNormalization back into the working
// copy's convolutions, every channel with its trained normalization and
// running statistics: a channel outside the mask was normalized with batch
// statistics during training like any other, and keeping its old weights
// instead broke the model (regimes/folded-bn: test accuracy 83 % in
// the run, 49 % written). It returns how many elements of the
// convolutions outside mask changed that way (mask nil: none is outside).
func (p *Prepared) foldBack(mask map[string][]bool) (int64, error) {
	if len(p.restored) == 0 {
		return 0, nil
	}
	type snap struct {
		conv *graph.Node
		w, b []float32
	}
	var snaps []snap
	for _, r := range p.restored {
		w, err := r.Conv.Input(1).Init.Float32s()
		if err != nil {
			return 0, err
		}
		b, err := r.Conv.Input(2).Init.Float32s()
		if err != nil {
			return 0, err
		}
		snaps = append(snaps, snap{r.Conv, w, b})
	}
	if err := graph.FoldBackBN(p.Work.Graph, p.restored, nil); err != nil {
		return 0, err
	}
	p.restored = nil
	var outside int64
	for _, sn := range snaps {
		m := mask[sn.conv.Input(1).Name+".bn.weight"]
		if mask == nil {
			continue
		}
		w, _ := sn.conv.Input(1).Init.Float32s()
		b, _ := sn.conv.Input(2).Init.Float32s()
		per := len(w) / len(b)
		for k := range b {
			if k < len(m) && m[k] {
				continue
			}
			for j := k * per; j < (k+1)*per; j++ {
				if math.Float32bits(w[j]) != math.Float32bits(sn.w[j]) {
					outside++
				}
			}
			if math.Float32bits(b[k]) != math.Float32bits(sn.b[k]) {
				outside++
			}
		}
	}
	return outside, nil
}

// Prepare makes the working copy of m (read from path) in memory and
// refuses a model that is not a classifier (infer.ModelOutput), whose
// gradient cannot be built (naming every node without a rule) or that has
// no trainable parameters. m itself is not changed until the result is
// written back into it. It is PrepareOn with the runtime's defaults.
func Prepare(m *graph.Model, path string) (*Prepared, error) {
	return PrepareOn(m, path, onnxrt.Options{})
}

// PrepareOn is Prepare for a run on runtime rt: its check builds the
// training graph that localization runs on with rt (localize.GraphOptions,
// as the engine builds it: train.EngineSpec) and keeps it, so that the run
// builds it once.
func PrepareOn(m *graph.Model, path string, rt onnxrt.Options) (*Prepared, error) {
	if _, err := infer.ModelOutput(m); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	work, untied, err := untiedCopy(m, path)
	if err != nil {
		return nil, err
	}
	art, err := autodiff.Build(work, train.EngineSpec(localize.GraphOptions(rt)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	notes := infer.InputNotes(m, true)
	nm, err := graph.Neurons(work.Graph)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(nm.Params) == 0 {
		return nil, fmt.Errorf("%s: the model has no trainable parameters (no float initializer feeds a differentiable "+
			"input); there is nothing to unlearn", path)
	}
	return &Prepared{Orig: m, Work: work, Untied: untied, Neurons: nm, Path: path, Notes: notes, graph: art}, nil
}

// PrepareModel loads path and prepares it (Prepare).
func PrepareModel(path string) (orig, work *graph.Model, untied int, err error) {
	m, err := onnxio.Load(path)
	if err != nil {
		return nil, nil, 0, err
	}
	p, err := Prepare(m, path)
	if err != nil {
		return nil, nil, 0, err
	}
	return p.Orig, p.Work, p.Untied, nil
}

// execute runs the algorithm on the working copy, writes the result back
// into the original graph (inference form), audits every initializer
// against a snapshot taken before the run, and saves the model atomically
// to out. On any error, including cancellation, nothing is written.
func (p *Prepared) execute(ctx context.Context, algo string, s *eval.Suite, mask map[string][]bool, classifier string,
	cfg Config, out, location string) (*Outcome, error) {
	a, err := LookupAlgorithm(algo)
	if err != nil {
		return nil, err
	}
	// The audit compares against the working copy's initializers as they
	// were before the run.
	before := map[string]*graph.Tensor{}
	for _, v := range p.Work.Graph.Initializers {
		if v.Init != nil {
			before[v.Name] = v.Init.Clone()
		}
	}
	res, err := Run(ctx, algo, Input{
		Model: p.Work, Data: s.Data, Forget: s.Forget, Retain: s.Retain,
		Mask: mask, Classifier: classifier, Neurons: p.Neurons,
	}, cfg)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	allowed := Allowed{Elements: mask, Whole: map[string]bool{}, State: true}
	if mask == nil {
		for _, prm := range p.Neurons.Params {
			allowed.Whole[prm.Value.Name] = true
		}
	}
	if a.TrainsClassifier {
		cls, err := p.Neurons.Classifier(classifier)
		if err != nil {
			return nil, err
		}
		for _, m := range cls.Members {
			allowed.Whole[m.Param.Name] = true
		}
	}
	audit, err := auditTensors(before, p.Work.Graph, p.Neurons, allowed)
	if err != nil {
		return nil, err
	}
	if !audit.BitIdentical {
		return nil, fmt.Errorf("unlearn: internal error: %s changed parameters outside its mask: %v; nothing was written",
			algo, audit.Violations)
	}
	folded, err := p.foldBack(mask)
	if err != nil {
		return nil, err
	}
	audit.FoldedStatistics = folded
	final, note, err := Finalize(p.Orig, p.Work, p.Untied)
	if err != nil {
		return nil, err
	}
	if p.DynamicBatch {
		if _, err := graph.MakeBatchSymbolic(final.Graph); err != nil {
			return nil, err
		}
	}
	// The output carries the normalization its inputs need.
	s.RecordNormalization(final)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := onnxio.Save(final, out, &onnxio.SaveOptions{Protect: []string{p.Path}, Location: location}); err != nil {
		return nil, err
	}
	return &Outcome{Result: res, Audit: audit, Note: note, Notes: p.Notes}, nil
}

// untiedCopy returns the working copy training changes: m cloned in
// memory with the initializers the exporter tied behind Identity nodes
// untied (and how many were) and a fixed batch made symbolic
// (graph.MakeBatchSymbolic), refused when the graph hard-codes the batch.
// Each caller's first training graph, built before any work, is the check
// that one can be built (an op on the way to the logits without a gradient
// rule, logits of unknown rank are refused): Prepare's for localization,
// Retrain's and TimeRetrain's engine.
func untiedCopy(m *graph.Model, path string) (*graph.Model, int, error) {
	work, err := onnxio.Clone(m)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	untied, err := graph.UntieIdentityInitializers(work.Graph)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	if _, err := graph.MakeBatchSymbolic(work.Graph); err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return work, untied, nil
}

// thousands writes n with a comma between groups of three digits (3,000).
// peakRSSMiB is the process's peak resident set size so far (VmHWM in
// /proc/self/status) in MiB, rounded to 0.1; 0 where it cannot be read.
func peakRSSMiB() float64 {
	b, err := fsread.File("/proc/self/status", "process status", 1<<20)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			f := strings.Fields(v)
			if len(f) != 2 || f[1] != "kB" {
				return 0
			}
			if kb, err := strconv.ParseFloat(f[0], 64); err == nil {
				return math.Round(kb/1024*10) / 10
			}
		}
	}
	return 0
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
