package unlearn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/train"
	"github.com/unlearn-tool/unlearn/train/autodiff"
)

// Errors of the algorithm layer; Run wraps them with context.
var (
	// ErrUnknownAlgorithm: the name is not one of Algorithms().
	ErrUnknownAlgorithm = errors.New("unlearn: unknown algorithm")
	// ErrInput: the model, data, index sets or mask cannot be used.
	ErrInput = errors.New("unlearn: invalid input")
)

// Input is what an algorithm works on.
type Input struct {
	// Model is an untied working copy; Run writes the result (parameters and,
	// for algorithms that train with batch statistics, BatchNormalization
	// running statistics) into its initializers, and leaves it untouched when
	// it fails.
	Model *graph.Model
	Data  *data.Dataset
	// Forget and Retain are indices into Data.Train; they must not overlap.
	Forget, Retain []int
	// Mask maps a parameter (initializer) name to the elements the algorithm
	// may change; a parameter missing from the map is frozen. nil means every
	// parameter may change.
	Mask map[string][]bool
	// Classifier names the classifier layer ("" = the graph's default, see
	// graph.NeuronMap.Classifier); rft trains it whole.
	Classifier string
	// Neurons is Model's neuron map when the caller has it (the pipeline
	// analyses the model once); nil: Run computes it.
	Neurons *graph.NeuronMap
}

// SCRUBConfig holds SCRUB's knobs (Kurmanji et al., "Towards Unbounded
// Machine Unlearning", NeurIPS 2023; github.com/meghdadk/SCRUB). Zero values
// take the defaults in brackets, SCRUB's own.
type SCRUBConfig struct {
	// MaxSteps is the number of epochs (from the first) that begin with a
	// max-step pass over the forget set (msteps) [1; SCRUB's is 2, see the
	// package documentation].
	MaxSteps int
	// Temperature of the distillation KL (kd_T) [4].
	Temperature float64
	// Alpha weighs the KL to the teacher in the min-steps [0.001]; Gamma the
	// cross-entropy [0.99].
	Alpha, Gamma float64
	// ForgetBatchSize is the batch size of the max-steps (del_batch_size)
	// [32]; the min-steps use Config.BatchSize.
	ForgetBatchSize int
}

// SSDConfig holds Selective Synaptic Dampening's knobs (Foster et al., AAAI
// 2024; github.com/if-loops/selective-synaptic-dampening).
type SSDConfig struct {
	// Alpha is the selection weighting: an element is dampened when its
	// forget-set importance exceeds Alpha times its full-set importance
	// [100; SSD's paper uses 10, see the package documentation].
	Alpha float64
	// Lambda is the dampening constant: the element is multiplied by
	// min(1, Lambda·imp_D/imp_F) [1].
	Lambda float64
}

// IUConfig holds influence unlearning's knobs (SalUn's wfisher, after Jia et
// al., "Model Sparsity Can Simplify Machine Unlearning", NeurIPS 2023).
type IUConfig struct {
	// Alpha scales the Newton-style step θ ← θ + Alpha·H⁻¹v [3e-4; it
	// depends on the model's gradient scale, see the package documentation].
	Alpha float64
	// Damping is the N of the WoodFisher recursion (1/(N + gᵀo)) [1000].
	Damping float64
	// Samples is the number of retain examples (taken in order, one at a
	// time) that build the inverse-Fisher approximation [Damping+2: the
	// reference loop stops after index N+1].
	Samples int
}

// Config sets an algorithm's hyperparameters. Zero values take the values of
// Defaults(algo); a negative Momentum or WeightDecay means zero.
type Config struct {
	Epochs    int
	LR        float64
	BatchSize int
	Momentum  float64
	// WeightDecay is SGD's L2 term; it never moves an element outside the mask.
	WeightDecay float64
	// Seed drives every random choice: data order, resets, random labels.
	Seed uint64

	// Beta is neggrad+'s retain weight: loss = β·L_retain − (1−β)·L_forget [0.99].
	Beta float64
	// L1 is l1-sparse's initial α, decayed linearly to 0 over the epochs
	// (α_e = L1·(1 − e/Epochs), e from 0) [7e-5].
	L1 float64
	// WrongLabels makes random-label draw from the classes other than the
	// true one; by default labels are uniform over all classes as in SalUn's
	// code (np.random.randint / torch.randint over num_classes).
	WrongLabels bool
	// Dropout runs Dropout nodes in training mode while training (off by
	// default: the updates are then deterministic).
	Dropout bool
	// Augment is torchvision's RandomCrop(padding) and RandomHorizontalFlip
	// (see data.Augment), applied to the training batches of the algorithms
	// whose Algorithm.Augments is set (rft, finetune, l1-sparse, neggrad,
	// neggrad+, random-label: every batch they descend or ascend on, as the
	// references load both sets through their train transforms). Its draws
	// come from PCG(Seed, streamAugment), so every other random choice is
	// the same with it on or off. The zero value is off.
	Augment data.Augment
	// GradChannels makes the training loops (every algorithm that trains
	// with BatchNormalization in training mode: rft, finetune, l1-sparse,
	// neggrad, neggrad+, random-label, scrub) compute the weight gradient
	// of a Conv, Gemm or MatMul weight only for the output channels that
	// hold a selected element of the mask (autodiff.Spec.GradChannels,
	// train.MaskChannels): k of C channels cost k/C of that weight
	// gradient. The elements updated are the same; their gradients are the
	// same sums computed over fewer output channels, equal up to float32
	// rounding (the products may be blocked differently), so results are
	// not bit-identical to a run without it. A non-finite gradient outside
	// the selected channels is no longer seen (train.CheckFinite). Off by
	// default; no effect without a mask.
	GradChannels bool

	SCRUB SCRUBConfig
	SSD   SSDConfig
	IU    IUConfig

	// Schedule is ScheduleFixed ("" or "fixed": Epochs at LR) or
	// ScheduleAuto ("auto": a learning-rate range test, then epochs until
	// the oracle-free proxies say the forget set looks unseen and utility
	// has recovered; training algorithms only). In auto mode Epochs, when
	// set, is the cap (unless Auto.MaxEpochs is), and LR, when set, is used
	// as is instead of the range test's choice.
	Schedule string
	// TrainSchedule is retrain's learning-rate schedule per step, as the
	// train command's --schedule: TrainCosine (to 0 over all steps; "" too)
	// or TrainConstant. The other algorithms keep their own schedules.
	TrainSchedule string
	Auto          AutoConfig
	// Proxies configures the oracle-free proxies (auto mode, or fixed mode
	// with Proxies.Track).
	Proxies ProxyConfig

	Runtime onnxrt.Options
	// Progress, if set, is called after every step.
	Progress func(Progress)
}

// Progress reports one step of an algorithm.
type Progress struct {
	Algorithm string
	// Phase: "train" (descent on the retain set, or on retain + relabelled
	// forget), "ascent" (neggrad), "max" and "min" (scrub), "lr-range"
	// (the auto schedule's range test: Step of Steps over all candidates),
	// "importance-forget" and "importance-full" (ssd), "gradients-forget",
	// "gradients-retain" and "woodfisher" (iu).
	Phase         string
	Epoch, Epochs int // 1-based; 0 outside epochs
	Step, Steps   int // 1-based within the epoch or phase
	// Rates is the number of candidate rates in the range test ("lr-range":
	// Steps/Rates steps each); 0 otherwise.
	Rates int
	Loss  float64
	LR    float64
}

// Result describes what an algorithm did.
type Result struct {
	Algorithm string
	// Epochs has one entry per training epoch (empty for ssd and iu): the
	// mean loss of the optimised objective and the accuracy on the batches
	// trained against their (possibly random) targets.
	Epochs []schema.EpochStats
	// Changed maps a parameter name to the number of its elements that are
	// not bit-identical to the input's (parameters with no change are left
	// out).
	Changed map[string]int
	// Reset counts the elements re-initialised (rft).
	Reset   int
	Seconds float64
	// Notes say, in words, what the algorithm did.
	Notes []string
	// Proxies are the oracle-free proxies (auto mode, or
	// Config.Proxies.Track; nil otherwise).
	Proxies *schema.ProxyLog
	// Auto reports the auto schedule's learning rate, stopping epoch and
	// reason (nil in fixed mode).
	Auto *schema.AutoSchedule
}

// Defaults returns the settings Run uses for algo's zero fields: the
// paper's recipes scaled to a CPU run of the bundled demo (see the table and
// the reasons in the package documentation). An unknown name gets the common
// settings only.
func Defaults(algo string) Config {
	c := Config{
		BatchSize: 128, Momentum: 0.9, Beta: 0.99, L1: 7e-5,
		SCRUB: SCRUBConfig{MaxSteps: 1, Temperature: 4, Alpha: 0.001, Gamma: 0.99, ForgetBatchSize: 32},
		SSD:   SSDConfig{Alpha: 100, Lambda: 1},
		IU:    IUConfig{Alpha: 3e-4, Damping: 1000},
	}
	if a, err := LookupAlgorithm(algo); err == nil && a.Defaults != nil {
		a.Defaults(&c)
	}
	return c
}

// withDefaults fills zero fields from d.
func (c Config) withDefaults(d Config) Config {
	zi := func(v *int, dv int) {
		if *v == 0 {
			*v = dv
		}
	}
	zf := func(v *float64, dv float64) {
		if *v == 0 {
			*v = dv
		}
	}
	zi(&c.Epochs, d.Epochs)
	zf(&c.LR, d.LR)
	zi(&c.BatchSize, d.BatchSize)
	zf(&c.Momentum, d.Momentum)
	zf(&c.WeightDecay, d.WeightDecay)
	c.Momentum = max(c.Momentum, 0)
	c.WeightDecay = max(c.WeightDecay, 0)
	zf(&c.Beta, d.Beta)
	zf(&c.L1, d.L1)
	zi(&c.SCRUB.MaxSteps, d.SCRUB.MaxSteps)
	zf(&c.SCRUB.Temperature, d.SCRUB.Temperature)
	zf(&c.SCRUB.Alpha, d.SCRUB.Alpha)
	zf(&c.SCRUB.Gamma, d.SCRUB.Gamma)
	zi(&c.SCRUB.ForgetBatchSize, d.SCRUB.ForgetBatchSize)
	zf(&c.SSD.Alpha, d.SSD.Alpha)
	zf(&c.SSD.Lambda, d.SSD.Lambda)
	zf(&c.IU.Alpha, d.IU.Alpha)
	c.Proxies = c.Proxies.withDefaults()
	zf(&c.IU.Damping, d.IU.Damping)
	if c.IU.Samples == 0 {
		c.IU.Samples = int(c.IU.Damping) + 2
	}
	return c
}

func (c Config) check() error {
	switch {
	case c.Epochs < 0:
		return fmt.Errorf("%w: %d epochs", ErrInput, c.Epochs)
	case c.LR < 0 || math.IsNaN(c.LR) || math.IsInf(c.LR, 0):
		return fmt.Errorf("%w: learning rate %v", ErrInput, c.LR)
	case c.BatchSize < 1:
		return fmt.Errorf("%w: batch size %d", ErrInput, c.BatchSize)
	case c.Momentum >= 1 || math.IsNaN(c.Momentum) || math.IsNaN(c.WeightDecay) || math.IsInf(c.WeightDecay, 0):
		return fmt.Errorf("%w: momentum %v, weight decay %v", ErrInput, c.Momentum, c.WeightDecay)
	case c.Beta < 0 || c.Beta > 1:
		return fmt.Errorf("%w: neggrad+ beta %v outside [0, 1]", ErrInput, c.Beta)
	case c.SCRUB.MaxSteps < 0 || c.SCRUB.ForgetBatchSize < 1 || c.SCRUB.Temperature <= 0:
		return fmt.Errorf("%w: SCRUB settings %+v", ErrInput, c.SCRUB)
	case c.SSD.Alpha <= 0 || c.SSD.Lambda <= 0:
		return fmt.Errorf("%w: SSD settings %+v", ErrInput, c.SSD)
	case c.IU.Damping <= 0 || c.IU.Samples < 1 || !(c.IU.Alpha > 0) || math.IsInf(c.IU.Alpha, 0):
		return fmt.Errorf("%w: IU settings %+v", ErrInput, c.IU)
	}
	if err := c.Augment.Check(); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	return c.Proxies.check()
}

// run is the state of one Run call.
type run struct {
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
	// later are notes composed once the algorithm has run (noteAfter).
	later []laterNote
}

// laterNote is the note at index i of the result's notes, composed by f.
type laterNote struct {
	i int
	f func() string
}

// Run unlearns in.Forget from in.Model with the named algorithm and writes
// the result into in.Model's initializers. Elements outside in.Mask never
// change by a single bit (rft's classifier layer excepted: it is always
// trained whole). It returns ctx.Err() when ctx is cancelled (in.Model is
// then left as it was) and an error wrapping train.ErrNonFinite when a loss,
// gradient or result is NaN or Inf.
func Run(ctx context.Context, algo string, in Input, cfg Config) (*Result, error) {
	a, err := lookup(algo)
	if err != nil {
		return nil, err
	}
	userEpochs, userLR := cfg.Epochs, cfg.LR
	cfg = cfg.withDefaults(Defaults(algo))
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if err := cfg.resolveSchedule(algo, userEpochs, userLR); err != nil {
		return nil, err
	}
	start := time.Now()
	r := &run{ctx: ctx, algo: algo, in: in, cfg: cfg, res: &Result{Algorithm: algo, Changed: map[string]int{}}}
	if err := r.validate(a); err != nil {
		return nil, err
	}
	before, err := r.snapshot()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if cfg.Augment.On() {
		if !a.Augments {
			r.note("augmentation %s not applied: %s does not augment (scrub distils against teacher logits computed once per unaugmented example; ssd and iu do not train on batches)", cfg.Augment, algo)
		} else if r.aug, err = data.NewAugmenter(cfg.Augment, r.rng(streamAugment)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInput, err)
		} else {
			r.note("augmentation on every training batch, as torchvision's %s before Normalize; evaluation, proxies and the auto schedule's probe see the images as they are", cfg.Augment.Torchvision())
		}
	}
	if in.Mask != nil && !anySelected(in.Mask) {
		what := "nothing changes"
		if a.TrainsClassifier {
			what = fmt.Sprintf("only the classifier, which %s always trains, changes", algo)
		}
		r.note("warning: the mask selects no parameter (a budget smaller than the first neuron the strategy ranks takes none): %s; raise --budget", what)
	}
	if a.FromScratch && cfg.Proxies.Track {
		cfg.Proxies.Track = false
		r.cfg.Proxies.Track = false
		r.note("no proxies: %s trains on the whole retain set, so no slice is held out to measure them on", algo)
	}
	if cfg.Schedule == ScheduleAuto || cfg.Proxies.Track {
		if err := r.setupProxies(a); err != nil {
			return nil, err
		}
	}
	if cfg.Schedule == ScheduleAuto {
		r.auto = &autoState{rangeTest: len(cfg.Auto.LRs) > 0}
		r.res.Auto = &schema.AutoSchedule{MaxEpochs: cfg.Auto.MaxEpochs}
		forget, utility := "the lower of the reference and the oracle estimate", "the oracle estimate's"
		if cfg.Auto.ForgetBaseline == ForgetReference {
			forget = "reference"
		}
		switch cfg.Auto.UtilityBaseline {
		case UtilityTest:
			utility = "the input model's"
		case UtilityHoldout:
			utility = "the input model's held-out"
		case UtilityMatched:
			utility = "the input model's test accuracy weighted like the held-out slice"
		}
		r.note("auto schedule (rule %d): at most %d epochs, the algorithm's schedule stretched over them; stop when forget accuracy ≤ %s + %g and %s ≥ %s − %g (after at least %d)",
			AutoVersion, cfg.Auto.MaxEpochs, forget, cfg.Auto.ForgetTolerance, cfg.Auto.utilityName(), utility, cfg.Auto.UtilityTolerance, cfg.Auto.MinEpochs)
	}
	if err := a.Run(r); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, cerr
		}
		return nil, fmt.Errorf("unlearn: %s: %w", algo, err)
	}
	for _, l := range r.later {
		r.res.Notes[l.i] = l.f()
	}
	for _, name := range r.params {
		now, err := r.in.Model.Graph.LocalValue(name).Init.Float32s()
		if err != nil {
			return nil, err
		}
		n := 0
		for i, v := range before[name] {
			if math.Float32bits(v) != math.Float32bits(now[i]) {
				n++
			}
		}
		if n > 0 {
			r.res.Changed[name] = n
		}
	}
	if r.proxy != nil && !a.Epochs {
		ps := time.Now()
		p, err := r.evalProxies(r.in.Model)
		if err != nil {
			return nil, err
		}
		r.proxy.log.After = *p
		r.proxy.log.Seconds += time.Since(ps).Seconds()
	}
	r.res.Seconds = time.Since(start).Seconds()
	return r.res, nil
}

// validate checks the input against the model and the algorithm.
func (r *run) validate(a *Algorithm) error {
	in := r.in
	if in.Model == nil || in.Model.Graph == nil {
		return fmt.Errorf("%w: no model", ErrInput)
	}
	if in.Data == nil || in.Data.Train == nil {
		return fmt.Errorf("%w: no training data", ErrInput)
	}
	r.split = in.Data.Train
	n := r.split.Len()
	seen := make([]uint8, n)
	for k, set := range [][]int{in.Forget, in.Retain} {
		name := [...]string{"forget", "retain"}[k]
		for _, i := range set {
			if i < 0 || i >= n {
				return fmt.Errorf("%w: %s index %d outside the %d training examples", ErrInput, name, i, n)
			}
			if seen[i]&(1<<k) != 0 {
				return fmt.Errorf("%w: %s index %d listed twice", ErrInput, name, i)
			}
			seen[i] |= 1 << k
			if seen[i] == 3 {
				return fmt.Errorf("%w: example %d is in both the forget and the retain set", ErrInput, i)
			}
		}
	}
	if a.FromScratch && in.Mask != nil {
		return errRetrainMask(a.Name)
	}
	if a.UsesForget && len(in.Forget) == 0 {
		return fmt.Errorf("%w: %s needs a non-empty forget set", ErrInput, a.Name)
	}
	if a.UsesRetain && len(in.Retain) == 0 {
		return fmt.Errorf("%w: %s needs a non-empty retain set", ErrInput, a.Name)
	}
	nm := in.Neurons
	if nm == nil {
		var err error
		if nm, err = graph.Neurons(in.Model.Graph); err != nil {
			return fmt.Errorf("%w: %v", ErrInput, err)
		}
	}
	r.nm = nm
	r.isPar = map[string]bool{}
	for _, p := range nm.Params {
		r.params = append(r.params, p.Value.Name)
		r.isPar[p.Value.Name] = true
	}
	if in.Mask != nil {
		var names []string
		for name := range in.Mask {
			names = append(names, name)
		}
		sort.Strings(names)
		any := false
		for _, name := range names {
			if !r.isPar[name] {
				return fmt.Errorf("%w: the mask names %q, which is not a trainable parameter of the model", ErrInput, name)
			}
			m := in.Mask[name]
			want := in.Model.Graph.LocalValue(name).Init.Len()
			if int64(len(m)) != want {
				return fmt.Errorf("%w: the mask of %q has %d elements, the parameter %d", ErrInput, name, len(m), want)
			}
			any = any || anyTrue(m)
		}
		if !any && !a.TrainsClassifier {
			return fmt.Errorf("%w: the mask selects no parameter element", ErrInput)
		}
	}
	return nil
}

// snapshot copies the values of every trainable parameter.
func (r *run) snapshot() (map[string][]float32, error) {
	out := make(map[string][]float32, len(r.params))
	for _, name := range r.params {
		v, err := r.in.Model.Graph.LocalValue(name).Init.Float32s()
		if err != nil {
			return nil, fmt.Errorf("%w: parameter %q: %v", ErrInput, name, err)
		}
		out[name] = append([]float32(nil), v...)
	}
	return out, nil
}

func anyTrue(m []bool) bool {
	for _, b := range m {
		if b {
			return true
		}
	}
	return false
}

// selected reports whether the mask lets any element of name change.
func (r *run) selected(name string) bool {
	if r.in.Mask == nil {
		return r.isPar[name]
	}
	return anyTrue(r.in.Mask[name])
}

// rng returns the random stream for one purpose (PCG(Seed, stream)).
func (r *run) rng(stream uint64) *rand.Rand {
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

// engineOpts says how to build an engine.
type engineOpts struct {
	bn   autodiff.BNMode
	loss autodiff.Loss
	// all differentiates every trainable parameter (iu needs the full
	// gradient); otherwise only those the mask (or whole) selects.
	all bool
	// whole lists parameters trained whole regardless of the mask.
	whole map[string]bool
}

// engine builds a training engine for in.Model whose parameters carry the
// mask: elements outside it are never updated by train's optimizers.
func (r *run) engine(o engineOpts) (*train.Engine, error) {
	spec := autodiff.Spec{BN: o.bn, Loss: o.loss, Dropout: r.cfg.Dropout && o.bn == autodiff.BNTraining, DropoutSeed: int64(r.cfg.Seed & math.MaxInt64)}
	if r.in.Mask != nil && !o.all {
		for _, name := range r.params {
			if o.whole[name] || r.selected(name) {
				spec.Params = append(spec.Params, name)
			}
		}
		if len(spec.Params) == 0 {
			return nil, fmt.Errorf("%w: the mask selects no parameter element", ErrInput)
		}
		if r.cfg.GradChannels && o.bn == autodiff.BNTraining {
			part := map[string][]bool{}
			for name, m := range r.in.Mask {
				if !o.whole[name] {
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
		if o.whole[p.Name] || r.in.Mask == nil {
			continue
		}
		if m := r.in.Mask[p.Name]; anyTrue(m) {
			p.Mask = m
			if cg, ok := e.Artifacts().GradChannels[p.Name]; ok && !train.CoversMask(cg, r.in.Model.Graph.LocalValue(p.Name).Init.Shape, m) {
				e.Close()
				return nil, fmt.Errorf("unlearn: the gradient of %q holds channels %v on axis %d, which miss elements of the mask", p.Name, cg.Channels, cg.Axis)
			}
		} else {
			p.Frozen = true
		}
	}
	return e, nil
}

// optimizer is SGD with the configured momentum and weight decay (PyTorch's
// torch.optim.SGD, as every reference uses).
func (r *run) optimizer() train.Optimizer {
	return &train.SGD{Momentum: r.cfg.Momentum, WeightDecay: r.cfg.WeightDecay}
}

func (r *run) progress(p Progress) {
	if r.cfg.Progress != nil {
		p.Algorithm = r.algo
		r.cfg.Progress(p)
	}
}

func (r *run) note(format string, args ...any) {
	r.res.Notes = append(r.res.Notes, fmt.Sprintf(format, args...))
}

// noteAfter keeps a note's place among the notes and composes it once the
// algorithm has run: a recipe under the auto schedule is only known then
// (the epochs trained, the rate the range test chose).
func (r *run) noteAfter(f func() string) {
	r.later = append(r.later, laterNote{len(r.res.Notes), f})
	r.res.Notes = append(r.res.Notes, "")
}

// trainedFor says how long the run trained: "for N epochs" under a fixed
// schedule; under the auto schedule the epochs trained, the cap and, when
// it differs from the last, the epoch whose state is the result.
func (r *run) trainedFor() string {
	a := r.res.Auto
	if a == nil {
		return "for " + plural(r.cfg.Epochs, "epoch")
	}
	s := fmt.Sprintf("for %s (auto schedule, at most %d)", plural(a.StopEpoch, "epoch"), a.MaxEpochs)
	if a.Epoch != a.StopEpoch {
		s += fmt.Sprintf(", the result being epoch %d's state", a.Epoch)
	}
	return s
}

// rate is the learning rate the run trained at: the auto schedule's choice,
// else the recipe's.
func (r *run) rate() float64 {
	if a := r.res.Auto; a != nil && a.LR > 0 {
		return a.LR
	}
	return r.cfg.LR
}

// plural is "1 epoch", "2 epochs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// stepOut is what one step of a training loop reports.
type stepOut struct {
	loss    float64
	correct int
	seen    int
	phase   string
	// stat says whether the step counts in the epoch statistics.
	stat bool
}

// stepFunc computes the gradients of step s (0-based) into the engine's
// Param.Grad.
type stepFunc func(s int) (stepOut, error)

// loop is a training loop: epochs of steps, each followed by a check for
// non-finite gradients, an optional gradient hook and an optimizer update at
// the epoch's learning rate (the references step their schedulers once per
// epoch).
type loop struct {
	e      *train.Engine
	opt    train.Optimizer
	epochs int
	lr     func(ep int) float64 // ep 0-based
	// epoch prepares epoch ep and returns its number of steps.
	epoch func(ep int) (int, stepFunc, error)
	// hook, if set, adjusts the gradients after a step (l1-sparse) and may
	// add to the reported loss.
	hook func(ep int, params []*train.Param) float64
}

func (r *run) fit(l loop) error {
	if r.auto != nil {
		return r.fitAuto(l)
	}
	for ep := 0; ep < l.epochs; ep++ {
		if err := r.trainEpoch(l, ep, l.lr(ep), l.epochs, false, 1); err != nil {
			return err
		}
		if r.proxy != nil {
			if err := r.proxiesAfter(l.e, ep+1, l.lr(ep)); err != nil {
				return err
			}
		}
	}
	return nil
}

// roundSteps is the steps of one round of an epoch of steps: the first
// ⌈fraction·steps⌉ with fraction in (0, 1) (AutoConfig.EpochFraction),
// else the whole epoch.
func roundSteps(steps int, fraction float64) int {
	if fraction > 0 && fraction < 1 {
		return max(1, int(math.Ceil(fraction*float64(steps))))
	}
	return steps
}

// trainEpoch runs epoch ep (0-based) of l at learning rate lr and appends
// its statistics to the result; epochs is what progress reports as the
// number of epochs. With anneal, the rate of step s of n is
// lr·AnnealFactor(s, n): a cosine from lr to 0.01·lr within the epoch.
// With fraction in (0, 1), only the first ⌈fraction·steps⌉ steps of the
// epoch's order are trained (the auto schedule's rounds,
// AutoConfig.EpochFraction), and the annealing spans them.
func (r *run) trainEpoch(l loop, ep int, lr float64, epochs int, anneal bool, fraction float64) error {
	start := time.Now()
	steps, step, err := l.epoch(ep)
	if err != nil {
		return err
	}
	steps = roundSteps(steps, fraction)
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
		if err := train.CheckFinite(l.e.Params()); err != nil {
			return fmt.Errorf("epoch %d step %d: %w (lower the learning rate)", ep+1, s+1, err)
		}
		if l.hook != nil {
			out.loss += l.hook(ep, l.e.Params())
		}
		slr := lr
		if anneal {
			slr = lr * AnnealFactor(s, steps)
		}
		if err := l.opt.Step(l.e.Params(), slr); err != nil {
			return err
		}
		if out.stat {
			lossSum += out.loss * float64(out.seen)
			correct += out.correct
			seen += out.seen
		}
		r.progress(Progress{Phase: out.phase, Epoch: ep + 1, Epochs: epochs, Step: s + 1, Steps: steps, Loss: out.loss, LR: slr})
	}
	st := schema.EpochStats{Epoch: ep + 1, Seconds: time.Since(start).Seconds()}
	if seen > 0 {
		st.Loss = lossSum / float64(seen)
		st.Accuracy = float64(correct) / float64(seen)
	}
	r.res.Epochs = append(r.res.Epochs, st)
	return nil
}

// countCorrect counts the rows of logits whose argmax equals the label.
func countCorrect(logits []float32, labels []int64, classes int) int {
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

// pick maps batch positions to example indices.
func pick(dst, idx, b []int) []int {
	dst = dst[:0]
	for _, j := range b {
		dst = append(dst, idx[j])
	}
	return dst
}

// lossStep loads examples sel (augmented by aug, nil for none), sets every weight to w, runs forward and
// backward, and reports the step.
func lossStep(e *train.Engine, split *data.Split, sel []int, aug *data.Augmenter, w float32, phase string) (stepOut, error) {
	weights, err := e.LoadAugmented(split, sel, aug)
	if err != nil {
		return stepOut{}, err
	}
	for i := range weights {
		weights[i] = w
	}
	res, err := e.StepFilled(len(sel))
	if err != nil {
		return stepOut{}, err
	}
	_, labels, _, _, err := e.Inputs(len(sel))
	if err != nil {
		return stepOut{}, err
	}
	return stepOut{loss: res.Loss, correct: countCorrect(res.Logits, labels, e.Classes()), seen: len(sel), phase: phase, stat: true}, nil
}

// writeBack copies the engine's parameters and running statistics into
// in.Model.
func (r *run) writeBack(e *train.Engine) error {
	_, err := e.WriteBack(r.in.Model.Graph)
	return err
}

// checkFiniteData fails when a parameter value is NaN or Inf.
func checkFiniteData(params []*train.Param) error {
	for _, p := range params {
		for i, v := range p.Data {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("%w: %q element %d is %v", train.ErrNonFinite, p.Name, i, v)
			}
		}
	}
	return nil
}

// anySelected reports whether mask selects at least one element.
func anySelected(mask map[string][]bool) bool {
	for _, m := range mask {
		if slices.Contains(m, true) {
			return true
		}
	}
	return false
}
