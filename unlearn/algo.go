package unlearn

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/unlearn-tool/unlearn/data"
	"github.com/unlearn-tool/unlearn/graph"
	"github.com/unlearn-tool/unlearn/internal/setting"
	"github.com/unlearn-tool/unlearn/onnxrt"
	"github.com/unlearn-tool/unlearn/schema"
	"github.com/unlearn-tool/unlearn/unlearn/autorule"
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

	// Own holds, by name, the settings of an algorithm registered from
	// outside the package (Setting without a Field): the running
	// algorithm's, defaults filled (SettingOf reads them).
	Own Values

	Runtime onnxrt.Options
	// Progress, if set, is called after every step.
	Progress func(Progress)
	// Epoch, if set, is called as each epoch of a training algorithm ends
	// (EpochEvent.Stats) and, under the auto schedule, once the stopping
	// rule has decided on the proxies measured after it (Decided).
	Epoch func(EpochEvent)
}

// EpochEvent reports an epoch as it ends: its statistics, or the proxies
// measured after it with the auto schedule's decision on them.
type EpochEvent struct {
	Algorithm string
	// Epochs is the epochs planned (under the auto schedule, the cap).
	Epochs  int
	Stats   *schema.EpochStats
	Decided *schema.EpochProxies
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
	// Notes say, in words, what the algorithm did; its warnings are
	// among them (Kind setting.KindWarning). They name settings as values,
	// which Job.Terms words for metrics.json.
	Notes []setting.Note
	// Proxies are the oracle-free proxies (auto mode, or
	// Config.Proxies.Track; nil otherwise).
	Proxies *schema.ProxyLog
	// Auto reports the auto schedule's learning rate, stopping epoch and
	// reason (nil in fixed mode).
	Auto *schema.AutoSchedule
}

// Defaults returns the settings Run uses for algo's zero fields: the
// common ones (batch 128, momentum 0.9) and the algorithm's own
// (Algorithm.Defaults: the paper's recipes scaled to a CPU run of the
// bundled demo, see the table and the reasons in the package
// documentation). An unknown name gets the common settings only.
func Defaults(algo string) Config {
	var c Config
	c.fill(algo)
	return c
}

// fill sets c's zero fields to the common defaults, every registered
// algorithm's settings that are Config fields (Algorithm.Settings), and
// algo's recipe (Algorithm.Defaults) and settings kept in Own.
func (c *Config) fill(algo string) {
	fillInt(&c.BatchSize, 128)
	fillFloat(&c.Momentum, 0.9)
	registryMu.RLock()
	for _, name := range order {
		c.fillOwn(registry[name], true)
	}
	registryMu.RUnlock()
	if a, err := LookupAlgorithm(algo); err == nil {
		if a.Defaults != nil {
			a.Defaults(c)
		}
		c.fillOwn(a, false)
	}
}

// withDefaults fills zero fields with algo's defaults (Defaults), clamps
// a negative momentum or weight decay to zero and fills the proxies'
// defaults.
func (c Config) withDefaults(algo string) Config {
	c.fill(algo)
	c.Momentum = max(c.Momentum, 0)
	c.WeightDecay = max(c.WeightDecay, 0)
	c.Proxies = c.Proxies.withDefaults()
	return c
}

// check refuses common settings that cannot work, then a's own (Algorithm.Check).
func (c Config) check(a *Algorithm) error {
	switch {
	case c.Epochs < 0:
		return fmt.Errorf("%w: %d epochs", ErrInput, c.Epochs)
	case c.LR < 0 || math.IsNaN(c.LR) || math.IsInf(c.LR, 0):
		return fmt.Errorf("%w: learning rate %v", ErrInput, c.LR)
	case c.BatchSize < 1:
		return fmt.Errorf("%w: batch size %d", ErrInput, c.BatchSize)
	case c.Momentum >= 1 || math.IsNaN(c.Momentum) || math.IsNaN(c.WeightDecay) || math.IsInf(c.WeightDecay, 0):
		return fmt.Errorf("%w: momentum %v, weight decay %v", ErrInput, c.Momentum, c.WeightDecay)
	}
	if err := c.checkOwn(a); err != nil {
		return err
	}
	if a.Check != nil {
		if err := a.Check(c); err != nil {
			return err
		}
	}
	if err := c.Augment.Check(); err != nil {
		return fmt.Errorf("%w: %v", ErrInput, err)
	}
	return c.Proxies.check()
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
	cfg = cfg.withDefaults(algo)
	if err := cfg.check(a); err != nil {
		return nil, err
	}
	if err := cfg.resolveSchedule(algo, userEpochs, userLR); err != nil {
		return nil, err
	}
	start := time.Now()
	r := &Runner{ctx: ctx, algo: algo, in: in, cfg: cfg, res: &Result{Algorithm: algo, Changed: map[string]int{}}}
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
			r.Note("augmentation %s not applied: %s does not augment%s", cfg.Augment, algo, a.WhyNoAugment())
		} else if r.aug, err = data.NewAugmenter(cfg.Augment, r.Rand(streamAugment)); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInput, err)
		} else {
			r.Note("augmentation on every training batch, as torchvision's %s before Normalize; evaluation, proxies and the "+
				"auto schedule's probe see the images as they are", cfg.Augment.Torchvision())
		}
	}
	if in.Mask != nil && !anySelected(in.Mask) {
		what := "nothing changes"
		if a.TrainsClassifier {
			what = fmt.Sprintf("only the classifier, which %s always trains, changes", algo)
		}
		r.Warn("the mask selects no parameter (a budget smaller than the first neuron the strategy ranks takes none): "+
			"%s; raise %s", what, setting.Of("budget"))
	}
	if a.FromScratch && cfg.Proxies.Track {
		cfg.Proxies.Track = false
		r.cfg.Proxies.Track = false
		r.Note("no proxies: %s trains on the whole retain set, so no slice is held out to measure them on", algo)
	}
	if cfg.Schedule == ScheduleAuto || cfg.Proxies.Track {
		if err := r.setupProxies(a); err != nil {
			return nil, err
		}
	}
	if cfg.Schedule == ScheduleAuto {
		r.auto = &autoState{rangeTest: len(cfg.Auto.LRs) > 0}
		r.res.Auto = &schema.AutoSchedule{MaxEpochs: cfg.Auto.MaxEpochs}
		r.noteAuto()
	}
	if err := a.Run(r); err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			return nil, cerr
		}
		return nil, fmt.Errorf("unlearn: %s: %w", algo, err)
	}
	for _, l := range r.later {
		r.res.Notes[l.i] = setting.Notef(setting.KindNote, "%s", l.f())
	}
	if err := r.countChanged(before); err != nil {
		return nil, err
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

// noteAuto notes the auto schedule's rule: its cap, and what forget and
// utility accuracy must come to.
func (r *Runner) noteAuto() {
	forget, utility := "the lower of the reference and the oracle estimate", "the oracle estimate's"
	if r.cfg.Auto.ForgetBaseline == autorule.ForgetReference {
		forget = "reference"
	}
	switch r.cfg.Auto.UtilityBaseline {
	case autorule.UtilityTest:
		utility = "the input model's"
	case autorule.UtilityHoldout:
		utility = "the input model's held-out"
	case autorule.UtilityMatched:
		utility = "the input model's test accuracy weighted like the held-out slice"
	}
	r.Note("auto schedule (rule %d): at most %d epochs, the algorithm's schedule stretched over them; stop when forget "+
		"accuracy ≤ %s + %g and %s ≥ %s − %g (after at least %d)",
		AutoVersion, r.cfg.Auto.MaxEpochs, forget, r.cfg.Auto.ForgetTolerance, r.cfg.Auto.UtilityName(), utility,
		r.cfg.Auto.UtilityTolerance, r.cfg.Auto.MinEpochs)
}

// countChanged records in the result, per parameter, the elements that are
// not bit-identical to before's.
func (r *Runner) countChanged(before map[string][]float32) error {
	for _, name := range r.params {
		now, err := r.in.Model.Graph.LocalValue(name).Init.Float32s()
		if err != nil {
			return err
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
	return nil
}

// validate checks the input against the model and the algorithm.
func (r *Runner) validate(a *Algorithm) error {
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
func (r *Runner) snapshot() (map[string][]float32, error) {
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

// anySelected reports whether mask selects at least one element.
func anySelected(mask map[string][]bool) bool {
	for _, m := range mask {
		if slices.Contains(m, true) {
			return true
		}
	}
	return false
}
