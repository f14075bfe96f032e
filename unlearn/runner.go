package unlearn

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/internal/textio"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
	"github.com/unlearn-tool/unlearn/unlearn/autofit"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
)

// Runner is one Run call, and what an Algorithm's Run works with: the
// input, the settings with defaults applied, seeded random streams, masked
// training engines, the training loop under the fixed or the auto schedule
// (Fit), per-element gradient statistics (Importance, GradSum) and the
// run's notes. The built-in algorithms use only its exported methods and
// the package's exported helpers (LossStep, TrainBatches, Pick,
// CountCorrect, CheckFiniteData), so an algorithm registered from another
// package (Register) can do everything they do.
type Runner struct {
	ctx  context.Context
	algo string
	in   Input
	cfg  Config
	res  *Result
	nm   *graph.NeuronMap
	// params are the trainable parameters in graph order, by name.
	params []string
	isPar  map[string]bool
	split  *data.Split
	// proxy is set when the proxies are computed, auto in auto mode.
	proxy *proxyState
	auto  *autoState
	// aug augments training batches (nil: off, or the algorithm does not
	// augment).
	aug *data.Augmenter
	// later are notes composed once the algorithm has run (NoteAfter).
	later []laterNote
}

// laterNote is the note at index i of the result's notes, composed by f.
type laterNote struct {
	i int
	f func() string
}

// Context returns the run's context; Run must stop when it is done.
func (r *Runner) Context() context.Context { return r.ctx }

// Input returns the model, data, index sets and mask of the run.
func (r *Runner) Input() Input { return r.in }

// Config returns the run's settings with defaults applied.
func (r *Runner) Config() Config { return r.cfg }

// Augmenter returns what augments the run's training batches
// (Config.Augment, drawn from its own stream), or nil when augmentation is
// off or the algorithm does not set Augments; pass it to
// train.Engine.LoadAugmented.
func (r *Runner) Augmenter() *data.Augmenter { return r.aug }

// Neurons returns the model's neuron map: its trainable parameters by
// layer, the classifier and the parameter count.
func (r *Runner) Neurons() *graph.NeuronMap { return r.nm }

// Params returns the names of the model's trainable parameters in graph
// order.
func (r *Runner) Params() []string { return r.params }

// Train returns the training split the index sets refer to.
func (r *Runner) Train() *data.Split { return r.split }

// RecordEpochs adds the statistics of epochs the algorithm trained outside
// Fit to the result (Fit records its own).
func (r *Runner) RecordEpochs(stats ...schema.EpochStats) {
	r.res.Epochs = append(r.res.Epochs, stats...)
}

// RecordReset adds n to the count of elements the algorithm
// re-initialised (Result.Reset).
func (r *Runner) RecordReset(n int) { r.res.Reset += n }

// selected reports whether the mask lets any element of name change.
func (r *Runner) selected(name string) bool {
	if r.in.Mask == nil {
		return r.isPar[name]
	}
	return anyTrue(r.in.Mask[name])
}

// Rand returns the random stream for one purpose: PCG(Config.Seed,
// stream). Give each use of randomness its own stream number, so that
// changing one does not shift another; the built-in algorithms use the
// stream* constants below, an outside algorithm any other number.
func (r *Runner) Rand(stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(r.cfg.Seed, stream))
}

// Random streams, one per purpose, so that changing one use of randomness
// does not shift another.
const (
	streamOrder  = 0x0de7
	streamForget = 0xf0e7
	streamReset  = 0x7e5e
	streamLabels = 0x1abe
	// streamAugment draws Config.Augment's crops and flips.
	streamAugment = 0xa06
)

// EngineOptions says how Engine builds a training engine.
type EngineOptions struct {
	BN   autodiff.BNMode
	Loss autodiff.Loss
	// All differentiates every trainable parameter (iu needs the full
	// gradient); otherwise only those the mask (or Whole) selects.
	All bool
	// Whole lists parameters trained whole regardless of the mask.
	Whole map[string]bool
}

// Engine builds a training engine for Input().Model whose parameters carry
// the mask: elements outside it are never updated by train's optimizers,
// and a parameter the mask leaves out entirely is frozen. The caller closes
// it.
func (r *Runner) Engine(o EngineOptions) (*train.Engine, error) {
	spec := autodiff.Spec{BN: o.BN, Loss: o.Loss, Dropout: r.cfg.Dropout && o.BN == autodiff.BNTraining,
		DropoutSeed: int64(r.cfg.Seed & math.MaxInt64)}
	if r.in.Mask != nil && !o.All {
		for _, name := range r.params {
			if o.Whole[name] || r.selected(name) {
				spec.Params = append(spec.Params, name)
			}
		}
		if len(spec.Params) == 0 {
			return nil, fmt.Errorf("%w: the mask selects no parameter element", ErrInput)
		}
		if r.cfg.GradChannels && o.BN == autodiff.BNTraining {
			part := map[string][]bool{}
			for name, m := range r.in.Mask {
				if !o.Whole[name] {
					part[name] = m
				}
			}
			spec.GradChannels = train.MaskChannels(r.nm, part)
		}
	}
	e, err := train.NewEngine(r.in.Model, train.EngineOptions{Runtime: r.cfg.Runtime, Spec: spec})
	if err != nil {
		return nil, err
	}
	for _, p := range e.Params() {
		if o.Whole[p.Name] || r.in.Mask == nil {
			continue
		}
		if m := r.in.Mask[p.Name]; anyTrue(m) {
			p.Mask = m
			if cg, ok := e.Artifacts().GradChannels[p.Name]; ok &&
				!train.CoversMask(cg, r.in.Model.Graph.LocalValue(p.Name).Init.Shape, m) {
				e.Close()
				return nil, fmt.Errorf("unlearn: the gradient of %q holds channels %v on axis %d, which miss elements of the mask",
					p.Name, cg.Channels, cg.Axis)
			}
		} else {
			p.Frozen = true
		}
	}
	return e, nil
}

// Optimizer is SGD with the configured momentum and weight decay (PyTorch's
// torch.optim.SGD, as every reference uses).
func (r *Runner) Optimizer() train.Optimizer {
	return &train.SGD{Momentum: r.cfg.Momentum, WeightDecay: r.cfg.WeightDecay}
}

// Report passes one step's progress to Config.Progress, naming the
// algorithm.
func (r *Runner) Report(p Progress) {
	if r.cfg.Progress != nil {
		p.Algorithm = r.algo
		r.cfg.Progress(p)
	}
}

// ReportEpoch passes an epoch that has ended to Config.Epoch, naming the
// algorithm.
func (r *Runner) ReportEpoch(e EpochEvent) {
	if r.cfg.Epoch != nil {
		e.Algorithm = r.algo
		r.cfg.Epoch(e)
	}
}

// Note adds a line to the run's notes (metrics.json's unlearning log),
// formatted as setting.Msgf formats: a setting.Ref argument names a
// setting, which each reader words in its terms.
func (r *Runner) Note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, setting.Notef(setting.KindNote, format, args...))
}

// Warn adds a warning about the run's result to its notes ("warning: "
// and the message Note would add); the run's own notes repeat it.
func (r *Runner) Warn(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, setting.Notef(setting.KindWarning, format, args...))
}

// NoteAfter keeps a note's place among the notes and composes it once the
// algorithm has run: a recipe under the auto schedule is only known then
// (the epochs trained, the rate the range test chose).
func (r *Runner) NoteAfter(f func() string) {
	r.later = append(r.later, laterNote{len(r.res.Notes), f})
	r.res.Notes = append(r.res.Notes, setting.Note{})
}

// TrainedFor says how long the run trained: "for N epochs" under a fixed
// schedule; under the auto schedule the epochs trained, the cap and, when
// it differs from the last, the epoch whose state is the result.
func (r *Runner) TrainedFor() string {
	a := r.res.Auto
	if a == nil {
		return "for " + textio.Count(r.cfg.Epochs, "epoch")
	}
	s := fmt.Sprintf("for %s (auto schedule, at most %d)", textio.Count(a.StopEpoch, "epoch"), a.MaxEpochs)
	if a.Epoch != a.StopEpoch {
		s += fmt.Sprintf(", the result being epoch %d's state", a.Epoch)
	}
	return s
}

// Rate is the learning rate the run trained at: the auto schedule's choice,
// else the recipe's.
func (r *Runner) Rate() float64 {
	if a := r.res.Auto; a != nil && a.LR > 0 {
		return a.LR
	}
	return r.cfg.LR
}

// Step is what one step of a training loop reports.
type Step struct {
	// Loss is the step's loss; Correct of Seen examples were classified
	// as their (possibly random) targets.
	Loss          float64
	Correct, Seen int
	// Phase names the step in Progress ("train", "ascent", ...).
	Phase string
	// Stat says whether the step counts in the epoch statistics.
	Stat bool
}

// StepFunc computes the gradients of step s (0-based) into the engine's
// Param.Grad.
type StepFunc func(s int) (Step, error)

// Loop is a training loop: epochs of steps, each followed by a check for
// non-finite gradients, an optional gradient hook and an optimizer update at
// the epoch's learning rate (the references step their schedulers once per
// epoch).
type Loop struct {
	Engine    *train.Engine
	Optimizer train.Optimizer
	// Epochs and LR (ep 0-based) are the schedule. Under the auto schedule
	// Config().Epochs is its cap, which Epochs should be, the run stops
	// when the rule says so, and LR is scaled by the range test's rate
	// over Config().LR; pass Cosine or Constant, which follow Config().
	Epochs int
	LR     func(ep int) float64
	// Epoch prepares epoch ep and returns its number of steps.
	Epoch func(ep int) (int, StepFunc, error)
	// Hook, if set, adjusts the gradients after a step (l1-sparse) and may
	// add to the reported loss.
	Hook func(ep int, params []*train.Param) float64
}

// Fit runs l: its epochs at its rates under a fixed schedule; under the
// auto schedule, the range test, then epochs until the stopping rule is
// met, each annealed within itself, keeping the best epoch's state. It
// records each epoch's statistics and the proxies, and stops when the
// run's context is done.
func (r *Runner) Fit(l Loop) error {
	if r.auto != nil {
		return r.fitAuto(l)
	}
	for ep := 0; ep < l.Epochs; ep++ {
		if err := r.trainEpoch(l, ep, l.LR(ep), l.Epochs, false, 1); err != nil {
			return err
		}
		if r.proxy != nil {
			if err := r.proxiesAfter(l.Engine, ep+1, l.LR(ep)); err != nil {
				return err
			}
		}
	}
	return nil
}

// trainEpoch runs epoch ep (0-based) of l at learning rate lr and appends
// its statistics to the result; epochs is what progress reports as the
// number of epochs. With anneal, the rate of step s of n is
// lr·autorule.AnnealFactor(s, n): a cosine from lr to 0.01·lr within the epoch.
// With fraction in (0, 1), only the first ⌈fraction·steps⌉ steps of the
// epoch's order are trained (the auto schedule's rounds,
// AutoConfig.EpochFraction), and the annealing spans them.
func (r *Runner) trainEpoch(l Loop, ep int, lr float64, epochs int, anneal bool, fraction float64) error {
	start := time.Now()
	steps, step, err := l.Epoch(ep)
	if err != nil {
		return err
	}
	steps = autofit.RoundSteps(steps, fraction)
	var lossSum float64
	var correct, seen int
	for s := 0; s < steps; s++ {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		out, err := step(s)
		if err != nil {
			return fmt.Errorf("epoch %d step %d: %w", ep+1, s+1, err)
		}
		if err := train.CheckFinite(l.Engine.Params()); err != nil {
			return fmt.Errorf("epoch %d step %d: %w (lower the learning rate)", ep+1, s+1, err)
		}
		if l.Hook != nil {
			out.Loss += l.Hook(ep, l.Engine.Params())
		}
		slr := lr
		if anneal {
			slr = lr * autorule.AnnealFactor(s, steps)
		}
		if err := l.Optimizer.Step(l.Engine.Params(), slr); err != nil {
			return err
		}
		if out.Stat {
			lossSum += out.Loss * float64(out.Seen)
			correct += out.Correct
			seen += out.Seen
		}
		r.Report(Progress{Phase: out.Phase, Epoch: ep + 1, Epochs: epochs, Step: s + 1, Steps: steps, Loss: out.Loss,
			LR: slr})
	}
	st := schema.EpochStats{Epoch: ep + 1, Seconds: time.Since(start).Seconds()}
	if seen > 0 {
		st.Loss = lossSum / float64(seen)
		st.Accuracy = float64(correct) / float64(seen)
	}
	r.res.Epochs = append(r.res.Epochs, st)
	r.ReportEpoch(EpochEvent{Epochs: epochs, Stats: &st})
	return nil
}

// CountCorrect counts the rows of logits whose argmax equals the label.
func CountCorrect(logits []float32, labels []int64, classes int) int {
	n := 0
	for k, y := range labels {
		row := logits[k*classes : (k+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if int64(best) == y {
			n++
		}
	}
	return n
}

// Pick maps batch positions to example indices.
func Pick(dst, idx, b []int) []int {
	dst = dst[:0]
	for _, j := range b {
		dst = append(dst, idx[j])
	}
	return dst
}

// LossStep loads examples sel of split (augmented by aug, nil for none),
// sets every example's loss weight to w, runs forward and backward, and
// reports the step.
func LossStep(e *train.Engine, split *data.Split, sel []int, aug *data.Augmenter, w float32,
	phase string) (Step, error) {
	weights, err := e.LoadAugmented(split, sel, aug)
	if err != nil {
		return Step{}, err
	}
	for i := range weights {
		weights[i] = w
	}
	res, err := e.StepFilled(len(sel))
	if err != nil {
		return Step{}, err
	}
	_, labels, _, _, err := e.Inputs(len(sel))
	if err != nil {
		return Step{}, err
	}
	return Step{Loss: res.Loss, Correct: CountCorrect(res.Logits, labels, e.Classes()), Seen: len(sel), Phase: phase,
		Stat: true}, nil
}

// WriteBack copies the engine's parameters and running statistics into
// Input().Model.
func (r *Runner) WriteBack(e *train.Engine) error {
	_, err := e.WriteBack(r.in.Model.Graph)
	return err
}

// CheckFiniteData fails when a parameter value is NaN or Inf.
func CheckFiniteData(params []*train.Param) error {
	for _, p := range params {
		for i, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%w: %q element %d is %v", train.ErrNonFinite, p.Name, i, v)
			}
		}
	}
	return nil
}

// Cosine is the references' CosineAnnealingLR(T_max = epochs, eta_min =
// floor·lr) stepped once per epoch.
func (r *Runner) Cosine(floor float64) func(ep int) float64 {
	s := train.Cosine{Base: r.Config().LR, Floor: floor * r.Config().LR}
	return func(ep int) float64 { return s.LR(ep, r.Config().Epochs) }
}

// Constant is Config.LR in every epoch.
func (r *Runner) Constant() func(ep int) float64 {
	return func(int) float64 { return r.Config().LR }
}

// TrainBatches shuffles 0..n-1 into batches of bs like data.Batches, but
// merges a final batch of fewer than bs/2 examples into the one before it.
// The references keep such a batch (drop_last=False); in training-mode
// BatchNormalization a batch of a few examples has noisy statistics, and on
// the demo a last batch of 4 cost 5 points of test accuracy (finetuning on
// 900 retain examples: test 0.79, against 0.84 with 896).
func TrainBatches(n, bs int, rng *rand.Rand) [][]int {
	b := data.Batches(n, bs, true, rng)
	if k := len(b); k >= 2 && 2*len(b[k-1]) < bs {
		b[k-2] = append(append([]int(nil), b[k-2]...), b[k-1]...)
		b = b[:k-1]
	}
	return b
}

// Descend trains e on the retain set with Fit: shuffled batches
// (TrainBatches), cross-entropy, the run's augmentation; hook as Loop.Hook.
// The training algorithms (rft, finetune, neggrad, neggrad+, random-label,
// l1-sparse) build their engines with BatchNormalization in training mode,
// as the references call model.train(), so running statistics are updated
// everywhere, and train with Optimizer, PyTorch's SGD.
func (r *Runner) Descend(e *train.Engine, lr func(int) float64, hook func(int, []*train.Param) float64) error {
	idx := r.Input().Retain
	order := r.Rand(streamOrder)
	sel := make([]int, 0, r.Config().BatchSize)
	return r.Fit(Loop{
		Engine: e, Optimizer: r.Optimizer(), Epochs: r.Config().Epochs, LR: lr, Hook: hook,
		Epoch: func(ep int) (int, StepFunc, error) {
			batches := TrainBatches(len(idx), r.Config().BatchSize, order)
			return len(batches), func(s int) (Step, error) {
				sel = Pick(sel, idx, batches[s])
				return LossStep(e, r.Train(), sel, r.Augmenter(), 1, "train")
			}, nil
		},
	})
}

// TrainingEngine is Engine with BatchNormalization in training mode, the
// training algorithms' engine, with the mask and how it trains noted
// (NoteMask, NoteBN). The caller closes it.
func (r *Runner) TrainingEngine() (*train.Engine, error) {
	e, err := r.Engine(EngineOptions{BN: autodiff.BNTraining})
	if err != nil {
		return nil, err
	}
	r.NoteMask()
	r.NoteBN(e)
	return e, nil
}

// FinetuneNote is the note of a descent on the retain set under the
// per-epoch cosine to 0.01·lr (rft, finetune), composed once the run has
// trained (NoteAfter).
func (r *Runner) FinetuneNote() string {
	c := r.Config()
	return fmt.Sprintf("finetuned on %d retain examples %s: SGD lr %.4g momentum %g weight decay %g, cosine to 0.01·lr "+
		"per epoch, batch %d",
		len(r.Input().Retain), r.TrainedFor(), r.Rate(), c.Momentum, c.WeightDecay, c.BatchSize)
}

// NoteMask notes how many parameter elements the mask lets change.
func (r *Runner) NoteMask() {
	if r.Input().Mask == nil {
		r.Note("no mask: every parameter may change")
		return
	}
	sel, tensors := 0, 0
	for _, name := range r.Params() {
		n := 0
		for _, b := range r.Input().Mask[name] {
			if b {
				n++
			}
		}
		if n > 0 {
			sel += n
			tensors++
		}
	}
	r.Note("mask: %d of %d parameter elements in %d tensors may change", sel, r.Neurons().NumParams, tensors)
}

// NoteBN notes how the engine trains: BatchNormalization in training
// mode, and the weight gradients it restricts to the selected output
// channels (Config.GradChannels).
func (r *Runner) NoteBN(e *train.Engine) {
	if len(e.Running()) > 0 {
		r.Note("BatchNormalization in training mode: batch statistics, running statistics of every BatchNormalization " +
			"updated (momentum 0.1, as PyTorch's train())")
	}
	if n := len(e.Artifacts().GradChannels); n > 0 {
		r.Note("weight gradients of %d tensors computed for their selected output channels only (the rest are never "+
			"updated)", n)
	}
}

// Reset re-initialises the masked elements of the engine's parameters (every
// element without a mask) and returns how many.
func (r *Runner) Reset(e *train.Engine) (int, error) {
	params := map[string][]float32{}
	mask := map[string][]bool{}
	for _, p := range e.Params() {
		var m []bool
		if r.Input().Mask == nil {
			m = make([]bool, len(p.Data))
			for i := range m {
				m[i] = true
			}
		} else {
			m = r.Input().Mask[p.Name]
		}
		if !anyTrue(m) {
			continue
		}
		params[p.Name] = p.Data
		mask[p.Name] = m
	}
	return train.ResetNeurons(r.Neurons(), params, mask, r.Rand(streamReset))
}

// Importance returns, per engine parameter, the mean over batches of idx
// (in order) of the squared gradient of the batch-mean cross-entropy.
func (r *Runner) Importance(e *train.Engine, idx []int, phase string) (map[string][]float32, error) {
	imp := map[string][]float32{}
	for _, p := range e.Params() {
		if !p.Frozen {
			imp[p.Name] = make([]float32, len(p.Data))
		}
	}
	batches := 0
	err := r.GradBatches(e, idx, phase, func(int) {
		batches++
		for _, p := range e.Params() {
			if a := imp[p.Name]; a != nil {
				for i, g := range p.Grad {
					a[i] += g * g
				}
			}
		}
	})
	if err != nil {
		return nil, err
	}
	n := float32(batches)
	for _, a := range imp {
		for i := range a {
			a[i] /= n
		}
	}
	return imp, nil
}

// GradSum returns, per engine parameter (in e.Params() order), Σ over
// batches of idx (in order) of the batch-mean gradient times the batch size,
// i.e. the sum of the per-example gradients.
func (r *Runner) GradSum(e *train.Engine, idx []int, phase string) ([][]float32, error) {
	params := e.Params()
	sum := make([][]float32, len(params))
	for j, p := range params {
		sum[j] = make([]float32, len(p.Data))
	}
	err := r.GradBatches(e, idx, phase, func(n int) {
		for j, p := range params {
			for i, g := range p.Grad {
				sum[j][i] += g * float32(n)
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return sum, nil
}

// GradBatches runs forward and backward on the batches of idx in order
// (batch-mean cross-entropy, the model as the engine was built), checks the
// gradients are finite, reports progress, and calls use with the batch size
// while the engine's gradients hold that batch's.
func (r *Runner) GradBatches(e *train.Engine, idx []int, phase string, use func(n int)) error {
	batches := data.Batches(len(idx), r.Config().BatchSize, false, nil)
	sel := make([]int, 0, r.Config().BatchSize)
	for s, b := range batches {
		if err := r.Context().Err(); err != nil {
			return err
		}
		sel = Pick(sel, idx, b)
		out, err := LossStep(e, r.Train(), sel, nil, 1, phase)
		if err != nil {
			return fmt.Errorf("%s batch %d: %w", phase, s+1, err)
		}
		if err := train.CheckFinite(e.Params()); err != nil {
			return fmt.Errorf("%s batch %d: %w", phase, s+1, err)
		}
		use(len(sel))
		r.Report(Progress{Phase: phase, Step: s + 1, Steps: len(batches), Loss: out.Loss})
	}
	return nil
}
