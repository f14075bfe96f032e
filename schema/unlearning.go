package schema

// Unlearning is what an unlearning run did: its settings, mask, algorithm
// log, the audit of the changed parameters and its timings.
// Flag kinds (Flag.Kind).
const (
	// FlagRuleNotMet: the auto schedule stopped at its cap or for lack
	// of progress without meeting its conditions.
	FlagRuleNotMet = "rule-not-met"
	// FlagProxiesDisagree: forget accuracy says unseen, the proxy MIA
	// tells the forget set from the reference.
	FlagProxiesDisagree = "proxies-disagree"
	// FlagTestDrop: test accuracy fell more than unlearn.MaxTestDrop
	// below the input model's.
	FlagTestDrop = "test-drop"
	// FlagEstimateBias: the forget set is of a kind on which the oracle
	// estimate was measured to be biased (Flag.Text gives the size).
	FlagEstimateBias = "estimate-bias"
	// FlagForgetResolution: the forget set is so small that the run
	// cannot resolve a point of forget accuracy: under 100 examples (one
	// example is more than a point), or, where no class is thinned, so few
	// that two standard errors of a forget accuracy near the oracle
	// estimate's exceed a point (unlearn.ResolutionPoint).
	FlagForgetResolution = "forget-resolution"
	// FlagStillRemembers: a run that widened its mask along its whole
	// ladder ended with the forget set still remembered (above the
	// rule's forget target); it advises retraining, with its cost.
	FlagStillRemembers = "still-remembers"
)

// Flag is one warning of a run about its own result.
type Flag struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

type Unlearning struct {
	Method      string  `json:"method"`
	Strategy    string  `json:"strategy"`
	Algorithm   string  `json:"algorithm"`
	Budget      float64 `json:"budget"`
	Epochs      int     `json:"epochs"`
	LR          float64 `json:"lr"`
	BatchSize   int     `json:"batch_size"`
	Momentum    float64 `json:"momentum"`
	WeightDecay float64 `json:"weight_decay"`
	Seed        uint64  `json:"seed"`
	// Augment is the training augmentation in --augment syntax
	// ("pad=4,flip": torchvision's RandomCrop(padding=4) and
	// RandomHorizontalFlip), absent when off or when the algorithm does
	// not augment.
	Augment string `json:"augment,omitempty"`
	// Schedule is "fixed" (Epochs at LR) or "auto" (Auto says what it
	// chose; Epochs and LR are then the epochs trained and the rate used).
	Schedule string        `json:"schedule"`
	Auto     *AutoSchedule `json:"auto,omitempty"`
	// Proxies are the oracle-free proxies (held-out retain utility, the
	// forget set against class-matched test examples, a proxy MIA) before,
	// during and after the run; absent with --proxies=false.
	Proxies *ProxyLog `json:"proxies,omitempty"`
	// Mask summarizes the localization (selected parameters per layer; the
	// element lists go to a separate mask file): the last rung's when the
	// run widened its mask.
	Mask *MaskSummary `json:"mask,omitempty"`
	// Widen lists the rungs of a run that widened its mask because the
	// forget set was still remembered (unlearn.DefaultWiden), the first
	// budget first; absent when the first rung was the only one.
	Widen []WidenStep `json:"widen,omitempty"`
	// Tolerances are what a vouched result claims: its forget and test
	// accuracy within these of an oracle's (unlearn.StatedTolerances).
	// Present when the run's rule aimed within a point of its estimate (a
	// forget tolerance not widened for the set's size).
	Tolerances *Tolerances `json:"tolerances,omitempty"`
	// Log is the algorithm's per-epoch loss and accuracy and what it reset.
	Log *RunLog `json:"log,omitempty"`
	// Audit lists the tensors whose bytes differ from the input model.
	Audit *Audit `json:"audit,omitempty"`
	// Notes report what the run adjusted or could not do; the warnings
	// among them ("warning: …") are also in Flags, by kind.
	Notes []string `json:"notes,omitempty"`
	// Flags are the run's warnings about its own result, each with its
	// kind (FlagRuleNotMet, FlagProxiesDisagree, FlagTestDrop,
	// FlagEstimateBias, FlagForgetResolution): a result with flags is not one the run vouches
	// for. Empty when the run's signals back its result.
	Flags []Flag `json:"flags,omitempty"`
	// Vouched is true when the auto schedule met its conditions and no
	// flag was raised: the result is one the oracle-free signals back.
	// Always false for a fixed recipe, which has no rule to meet.
	Vouched bool              `json:"vouched"`
	Timings UnlearningTimings `json:"timings"`
	// RetrainEstimateS estimates retraining from scratch on the retain
	// set for RetrainEpochs (--retrain-epochs): seconds per full training
	// step (RetrainStepS) × steps per epoch × RetrainEpochs, plus the
	// first step's extra seconds when the steps were timed.
	RetrainEstimateS float64 `json:"retrain_estimate_s,omitempty"`
	RetrainEpochs    int     `json:"retrain_epochs,omitempty"`
	// RetrainEpochsFrom says where RetrainEpochs came from:
	// RetrainEpochsFlag or RetrainEpochsMetadata.
	RetrainEpochsFrom string `json:"retrain_epochs_from,omitempty"`
	// Speedup is RetrainEstimateS / (localize + unlearn seconds).
	Speedup float64 `json:"speedup,omitempty"`
	// RetrainEstimateBasis says what the estimate of retraining (for
	// RetrainEstimateS, or for the note that retraining may be cheaper)
	// rests on: RetrainBasisTimed or RetrainBasisRun; absent when no
	// estimate was made. RetrainStepS is the seconds of one full training
	// step at BatchSize; RetrainStepsTimed the steps timed
	// (RetrainBasisTimed).
	RetrainEstimateBasis string  `json:"retrain_estimate_basis,omitempty"`
	RetrainStepS         float64 `json:"retrain_step_s,omitempty"`
	RetrainStepsTimed    int     `json:"retrain_steps_timed,omitempty"`
	// ExamplesTrained counts the examples the run trained on (forward and
	// backward): every epoch's examples plus the range test's steps × rates
	// × batch. EpochsTrained is ExamplesTrained ÷ the retain set's size,
	// and EpochsEquivalent the run's localize + unlearn seconds ÷ the
	// seconds one epoch over the retain set takes at this run's training
	// speed (so it also counts localization, range test and proxies).
	// Set for algorithms that train in epochs over known examples.
	ExamplesTrained  int     `json:"examples_trained,omitempty"`
	EpochsTrained    float64 `json:"epochs_trained,omitempty"`
	EpochsEquivalent float64 `json:"epochs_equivalent,omitempty"`
}

// UnlearningTimings are wall-clock seconds of the run's stages.
type UnlearningTimings struct {
	EvaluateBeforeS float64 `json:"evaluate_before_s"`
	LocalizeS       float64 `json:"localize_s"`
	UnlearnS        float64 `json:"unlearn_s"`
	EvaluateAfterS  float64 `json:"evaluate_after_s"`
	TotalS          float64 `json:"total_s"`
	// RetrainTimingS is what timing full training steps for the
	// retraining estimate took (RetrainBasisTimed), included in TotalS.
	RetrainTimingS float64 `json:"retrain_timing_s,omitempty"`
	// PeakRSSMiB is the process's peak resident memory (Linux's VmHWM) when
	// the run ended, in MiB, ONNX Runtime's allocations included: what the
	// machine needed for this run (absent where /proc cannot be read).
	PeakRSSMiB float64 `json:"peak_rss_mib,omitempty"`
}

// What a retraining estimate rests on (Unlearning.RetrainEstimateBasis).
const (
	// RetrainBasisTimed: full training steps (every parameter trainable,
	// the whole backward pass: the step of `unlearn train --from-scratch`)
	// of the same model, batch size, threads and data, timed after a
	// warm-up step on a separate copy of the model.
	RetrainBasisTimed = "timed-full-steps"
	// RetrainBasisRun: the run retrained from scratch (--method retrain);
	// its own epochs are the measurement.
	RetrainBasisRun = "retrain-run"
)

// Where Unlearning.RetrainEpochs came from.
const (
	// RetrainEpochsFlag: the user's --retrain-epochs.
	RetrainEpochsFlag = "flag"
	// RetrainEpochsMetadata: the model's unlearn.train_epochs metadata.
	RetrainEpochsMetadata = "metadata"
)

// RunLog is what an algorithm reported: per-epoch mean loss, accuracy and
// seconds, the elements it re-initialised (rft) and its notes.
type RunLog struct {
	Epochs []EpochStats `json:"epochs"`
	Notes  []string     `json:"notes"`
	Reset  int          `json:"reset"`
}

// Tolerances are a verdict's stated tolerances, as fractions (0.01 = 1
// point): the larger of one point and what the set resolves (two standard
// errors of a forget accuracy near ForgetLevel on ForgetExamples examples,
// 2.5 of a test accuracy near TestLevel on TestExamples). Resolved is false
// when the forget set cannot resolve 5 points: then there is no verdict,
// only the numbers.
type Tolerances struct {
	Forget         float64 `json:"forget"`
	Test           float64 `json:"test"`
	ForgetExamples int     `json:"forget_examples"`
	TestExamples   int     `json:"test_examples"`
	ForgetLevel    float64 `json:"forget_level"`
	TestLevel      float64 `json:"test_level"`
	Resolved       bool    `json:"resolved"`
	// Cap is the widest forget tolerance a verdict states.
	Cap float64 `json:"cap"`
}

// WidenStep is one rung of a widening run: the budget, the depth floor
// and the elements it selected, the auto schedule's epochs, result epoch and reason, the
// proxies' forget and test accuracy of its result, how far the forget
// accuracy lay above the rule's target where that made the run widen
// (StillRemembers, a fraction), and its seconds.
type WidenStep struct {
	Budget         float64 `json:"budget"`
	DepthFloor     float64 `json:"depth_floor,omitempty"`
	Selected       int64   `json:"selected"`
	Epochs         int     `json:"epochs"`
	Epoch          int     `json:"epoch"`
	Reason         string  `json:"reason"`
	ForgetAccuracy float64 `json:"forget_accuracy"`
	TestAccuracy   float64 `json:"test_accuracy"`
	StillRemembers float64 `json:"still_remembers,omitempty"`
	Seconds        float64 `json:"seconds"`
}

// EpochStats summarises one epoch: the mean training loss and accuracy over
// its batches (with the weights in force while training, as PyTorch loops
// usually report them). train.Fit returns them. Its keys are the field
// names, capitalised, as they were before the type had tags.
type EpochStats struct {
	Epoch    int     `json:"Epoch"`
	Loss     float64 `json:"Loss"`
	Accuracy float64 `json:"Accuracy"`
	Seconds  float64 `json:"Seconds"`
}

// Audit is what an unlearning run changed, checked against the input
// model's initializers: the changed tensors, the counts, and whether every
// element outside what the run was allowed to change is bit-identical.
type Audit struct {
	// Tensors that differ, sorted by name.
	Changed []TensorChange `json:"changed"`
	// UnchangedTensors counts initializers that are bit-identical.
	UnchangedTensors int `json:"unchanged_tensors"`
	// ChangedParams counts changed elements of trainable parameters;
	// TotalParams is the number of trainable elements.
	ChangedParams int64 `json:"changed_params"`
	TotalParams   int64 `json:"total_params"`
	// ChangedState counts changed elements of other initializers
	// (BatchNormalization running statistics).
	ChangedState int64 `json:"changed_state"`
	// Violations lists changes outside what was allowed; empty in every
	// correct run.
	Violations []string `json:"violations"`
	// BitIdentical is true when every element outside the allowed set is
	// bit-identical to the input.
	BitIdentical bool `json:"outside_mask_bit_identical"`
	// FoldedStatistics counts the elements of convolution weights and
	// biases outside the mask that changed only because the run gave a
	// model whose export had folded BatchNormalization into them trainable
	// normalization back and folded it again on write, with the running
	// statistics training moved (the state a model with BatchNormalization
	// keeps in separate tensors, which the audit allows). Counted against
	// the model as written; 0 otherwise.
	FoldedStatistics int64 `json:"folded_statistics,omitempty"`
}

// TensorChange describes one changed initializer.
type TensorChange struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"` // parameter role, or "state"
	Elements int64  `json:"elements"`
	Changed  int64  `json:"changed"`
	// Channels lists the output channels with at least one changed element
	// (trainable parameters in a layer).
	Channels []int  `json:"channels,omitempty"`
	Layer    string `json:"layer,omitempty"`
}

// MaskSummary is a mask without its per-tensor runs: what metrics.json's
// unlearning.mask records (the runs stay in the mask file).
type MaskSummary struct {
	Schema   string  `json:"schema"`
	Strategy string  `json:"strategy"`
	Budget   float64 `json:"budget"`
	// DepthFloor and MinDepth: del's depth floor (a fraction of the
	// network's depth) and the smallest layer depth it left eligible;
	// absent when every layer was eligible.
	DepthFloor float64       `json:"depth_floor,omitempty"`
	MinDepth   int           `json:"min_depth,omitempty"`
	Selected   int64         `json:"selected"`
	Total      int64         `json:"total"`
	Layers     []LayerChoice `json:"layers"`
	All        bool          `json:"all,omitempty"` // strategy full: every parameter
	CritMem    *CritMemStats `json:"critmem,omitempty"`
}

// LayerChoice is the per-layer summary of a mask.
type LayerChoice struct {
	Layer    string `json:"layer"`
	Channels int    `json:"channels"`
	Chosen   []int  `json:"chosen"` // neurons with every element selected
	Partial  []int  `json:"partial,omitempty"`
	Params   int64  `json:"params"` // selected elements in the layer
}

// CritMemStats describes a critmem run; it is recorded in the mask file.
type CritMemStats struct {
	// Examples is the number of forget examples examined (a seeded sample
	// of localize.Options.CritMemExamples when the forget set is larger).
	Examples int `json:"examples"`
	// Flipped counts the examples whose prediction changed within MaxSteps
	// zeroings; the others contribute the neurons they zeroed all the same.
	Flipped int `json:"flipped"`
	// Zeroed is the number of zeroings over all examples; Union the number
	// of distinct neurons zeroed.
	Zeroed   int `json:"zeroed"`
	Union    int `json:"union"`
	MaxSteps int `json:"max_steps"`
	// Excluded names the layer never zeroed (the classifier), if any.
	Excluded string `json:"excluded,omitempty"`
}
