package schema

// ProxyReference says which test examples show what "never seen" looks like
// for a forget set, and why.
//
// IID or not: Pearson's χ² statistic of the forget set's class counts
// against the counts expected from the training split's class proportions,
// χ² = Σ_c (n_c − n·p_c)²/(n·p_c) over the classes present in the training
// split, is compared with the (1 − Alpha) quantile of the χ² distribution
// with k − 1 degrees of freedom (k such classes). The forget set is IID
// unless the statistic exceeds it (or the training split has one class).
// Small forget sets therefore count as IID unless they are very lopsided:
// the test has little power on them, and the overall test accuracy is the
// safer reference then.
//
//   - IID: the reference is the whole test split and its accuracy (and
//     mean loss) is the plain one.
//   - non-IID: the reference is the test examples of the forget set's
//     classes, and its accuracy is class-matched: Σ_c w_c·acc_test(c), with
//     w_c the share of class c in the forget set (classes without test
//     examples dropped and the weights renormalised); the same weighting
//     gives the loss. If no forget class has a test example the reference
//     falls back to the whole test split (Note says so).
type ProxyReference struct {
	IID       bool    `json:"iid"`
	ChiSquare float64 `json:"chi_square"`
	DoF       int     `json:"dof"`
	Critical  float64 `json:"critical"`
	Alpha     float64 `json:"alpha"`
	// Classes are the classes of the forget set that the reference covers
	// and Weights their shares of the forget set (summing to 1); nil for an
	// IID forget set.
	Classes []int     `json:"classes,omitempty"`
	Weights []float64 `json:"weights,omitempty"`
	// Test holds the reference examples: indices into the test split, in
	// increasing order.
	Test  []int  `json:"-"`
	NTest int    `json:"n_test"`
	Note  string `json:"note,omitempty"`
}

// Proxies are the oracle-free signals of one model (see
// eval.ComputeProxies). Every accuracy is a fraction in [0, 1]; every loss
// is a mean cross-entropy in nats.
type Proxies struct {
	// HoldoutAccuracy and HoldoutLoss: the held-out retain slice (utility).
	HoldoutAccuracy float64 `json:"holdout_accuracy"`
	HoldoutLoss     float64 `json:"holdout_loss"`
	// ForgetAccuracy and ForgetLoss: the forget set.
	ForgetAccuracy float64 `json:"forget_accuracy"`
	ForgetLoss     float64 `json:"forget_loss"`
	// ReferenceAccuracy and ReferenceLoss: the reference test examples,
	// class-matched for a non-IID forget set, overall for an IID one (see
	// ProxyReference). What the forget set would score had it never been
	// seen.
	ReferenceAccuracy float64 `json:"reference_accuracy"`
	ReferenceLoss     float64 `json:"reference_loss"`
	// ForgetGap is ForgetAccuracy − ReferenceAccuracy: near 0 when the
	// forget set looks unseen, positive while it is remembered.
	ForgetGap float64 `json:"forget_gap"`
	// TestAccuracy is the accuracy on the whole test split (eval.EvaluateProxies;
	// eval.ComputeProxies leaves it 0): utility on unseen examples of every
	// class, which the held-out slice, seen by the input model, is not.
	TestAccuracy float64 `json:"test_accuracy"`
	// MIA is nil with eval.ProxyOptions.NoMIA.
	MIA *ProxyMIA `json:"mia,omitempty"`
}

// ProxyMIA is a membership-inference attack that needs no oracle: one RBF
// SVC of SalUn's SVC_MIA (eval.SVCMIA's settings, eval.MIAOptions.SVC) on
// a single feature, fitted on the held-out retain slice as members (label 1; the
// original model trained on them, the unlearning run does not) against the
// reference test examples as non-members (label 0), the larger of the two
// thinned to the size of the smaller (rows ⌊i·n/k⌋, i < k), then applied
// to the forget set. Each score is the fraction of a group the SVC calls
// non-member; Forget is SalUn's MIA-efficacy direction (higher = less is
// remembered). A forget set that looks unseen scores about what the
// reference itself scores (Reference, the same SVC on its own non-members):
// the difference Reference − Forget is near 0 then.
type ProxyMIA struct {
	Feature   string  `json:"feature"`
	Forget    float64 `json:"forget"`
	Reference float64 `json:"reference"`
	Holdout   float64 `json:"holdout"`
	// Note reports an SVC fit that stopped at its iteration cap.
	Note string `json:"note,omitempty"`
}

// ProxyLog is the proxies of an unlearning run (unlearn.Result.Proxies;
// metrics.json's unlearning.proxies).
type ProxyLog struct {
	Reference *ProxyReference `json:"reference"`
	// Holdout lists the held-out retain examples (training-split indices);
	// the run did not train on them.
	Holdout     []int `json:"-"`
	HoldoutSize int   `json:"holdout"`
	// Before are the input model's proxies, After the result's; Epochs
	// has one entry per trained epoch (none for ssd and iu).
	// BeforeMatchedTest is the input model's test accuracy weighted like
	// the held-out slice (eval.MatchedAccuracy): its level on unseen
	// examples distributed like the slice.
	BeforeMatchedTest float64 `json:"before_matched_test"`
	// Estimate is what a model retrained without the forget set is
	// expected to score, from the input model alone (eval.EstimateOracle).
	Estimate *OracleEstimate `json:"oracle_estimate,omitempty"`
	Before   Proxies         `json:"before"`
	After    Proxies         `json:"after"`
	Epochs   []EpochProxies  `json:"epochs,omitempty"`
	Seconds  float64         `json:"seconds"`
}

// OracleEstimate is the oracle-free estimate of what a model retrained
// without the forget set would score (eval.EstimateOracle): the input
// model's test predictions with each class's logit shifted by the log-ratio
// of its training frequency without and with the forget set.
type OracleEstimate struct {
	// Method is "prior-shift".
	Method string `json:"method"`
	// Shift is log(π'_c/π_c) per class: π_c the class's share of the
	// training split, π'_c its share of the retain set. 0 for a class the
	// forget set removes entirely (listed in Removed; its logit is shifted
	// by −∞, so it is never predicted) and for a class without training
	// examples. MaxShift is the largest |Shift|.
	Shift    []float64 `json:"shift"`
	MaxShift float64   `json:"max_shift"`
	Removed  []int     `json:"removed_classes,omitempty"`
	// Partial lists the classes the forget set thins without removing
	// them: it takes at least eval.PartialClassShare (10 points) more of
	// their training examples than of the whole split. There the oracle
	// also learns worse features for the class, which the estimate leaves
	// out: its forget accuracy is then an upper bound.
	Partial []int `json:"partial_classes,omitempty"`
	// PartialKept is the fewest training examples a thinned class keeps
	// (0 when none is thinned).
	PartialKept int `json:"partial_kept,omitempty"`
	// TestAccuracy is the estimate of the oracle's accuracy on the test
	// split; ReferenceAccuracy on the proxies' reference (the forget set's
	// classes weighted like it; the whole test split for an IID forget
	// set), i.e. of its accuracy on the forget set, which it never saw.
	TestAccuracy      float64 `json:"test_accuracy"`
	ReferenceAccuracy float64 `json:"reference_accuracy"`
}

// EpochProxies are the proxies after one epoch, with the rate the epoch
// used, the stopping rule's verdict (auto mode) and the seconds the
// measurement took.
type EpochProxies struct {
	Epoch int     `json:"epoch"`
	LR    float64 `json:"lr"`
	Proxies
	Decision *ProxyDecision `json:"decision,omitempty"`
	Seconds  float64        `json:"seconds"`
}

// ProxyDecision is the auto schedule's stopping rule's verdict after one epoch.
type ProxyDecision struct {
	Stop   bool   `json:"stop"`
	Reason string `json:"reason,omitempty"`
	// Epoch is the epoch whose model is the result when Stop (the last
	// one when the rule is met, else the one closest to meeting it).
	Epoch int `json:"epoch,omitempty"`
	// ForgetOK and UtilityOK are the rule's two conditions.
	ForgetOK  bool `json:"forget_ok"`
	UtilityOK bool `json:"utility_ok"`
	// Detail says the same in words, with the numbers.
	Detail string `json:"detail"`
}

// AutoSchedule reports what the auto schedule of a run chose
// (unlearn.Config.Schedule "auto").
type AutoSchedule struct {
	// LR is the rate used (the range test's choice, or unlearn.Config.LR).
	LR float64 `json:"lr"`
	// RangeTest holds the candidates' trials (empty when unlearn.Config.LR was
	// given); StartLoss is the probe loss before any trial step,
	// RangeSteps the steps per candidate.
	RangeTest  []LRTrial `json:"lr_range_test,omitempty"`
	StartLoss  float64   `json:"start_loss,omitempty"`
	RangeSteps int       `json:"range_steps,omitempty"`
	RangeS     float64   `json:"range_s"`
	// PlateauCuts counts the times the run cut its rate on a plateau
	// instead of stopping (unlearn.AutoConfig.PlateauCuts).
	PlateauCuts int `json:"plateau_cuts,omitempty"`
	// LRCap is the largest rate the range test tried: the round budget
	// (unlearn.AutoConfig.RoundBudget) over the steps of one round (rule
	// version 9); the candidates above it were not tried. 0: no cap.
	LRCap float64 `json:"lr_cap,omitempty"`
	// UtilityTarget is the held-out accuracy the rule asked for (before
	// the tolerance) and UtilityBaseline where it came from.
	UtilityTarget   float64 `json:"utility_target"`
	UtilityBaseline string  `json:"utility_baseline"`
	// ForgetBaseline is what the forget accuracy was held against
	// ("estimate" or "reference", unlearn.AutoConfig.ForgetBaseline) and
	// ForgetCeiling, under "estimate", the oracle estimate's reference
	// accuracy that capped it besides the model's own reference accuracy.
	ForgetBaseline string   `json:"forget_baseline,omitempty"`
	ForgetCeiling  *float64 `json:"forget_ceiling,omitempty"`
	// ForgetFixed says that the forget accuracy was held against
	// ForgetCeiling alone (an IID forget set, rule version 8), not against
	// the lower of it and the model's own reference accuracy;
	// SplitAllowance is what the forget tolerance includes for unseen
	// training examples scoring above the test split there.
	ForgetFixed    bool    `json:"forget_fixed,omitempty"`
	SplitAllowance float64 `json:"split_allowance,omitempty"`
	// ForgetTolerance and UtilityTolerance are the rule's tolerances
	// (fractions of accuracy).
	ForgetTolerance  float64 `json:"forget_tolerance"`
	UtilityTolerance float64 `json:"utility_tolerance"`
	// StopEpoch is the last epoch trained, Epoch the epoch whose model is
	// the result (StopEpoch unless the run stopped without meeting the
	// rule: then the epoch closest to it), MaxEpochs the cap.
	StopEpoch int    `json:"stop_epoch"`
	Epoch     int    `json:"epoch"`
	MaxEpochs int    `json:"max_epochs"`
	Reason    string `json:"reason"`
	Detail    string `json:"detail"`
}

// LRTrial is one candidate of the range test. Loss is the probe's mean
// cross-entropy after the trial steps (0 when Diverged).
type LRTrial struct {
	LR       float64 `json:"lr"`
	Loss     float64 `json:"loss"`
	Diverged bool    `json:"diverged"`
}
