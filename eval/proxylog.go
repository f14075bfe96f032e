package eval

// What an unlearning run reports about its oracle-free proxies and its auto
// schedule (the unlearn package fills them; they live here so that
// metrics.json and the HTML report can carry them).

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
	// the held-out slice (MatchedAccuracy): its level on unseen
	// examples distributed like the slice.
	BeforeMatchedTest float64        `json:"before_matched_test"`
	Before            Proxies        `json:"before"`
	After             Proxies        `json:"after"`
	Epochs            []EpochProxies `json:"epochs,omitempty"`
	Seconds           float64        `json:"seconds"`
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
	// LR is the rate used (the range test's choice, or Config.LR).
	LR float64 `json:"lr"`
	// RangeTest holds the candidates' trials (empty when Config.LR was
	// given); StartLoss is the probe loss before any trial step,
	// RangeSteps the steps per candidate.
	RangeTest  []LRTrial `json:"lr_range_test,omitempty"`
	StartLoss  float64   `json:"start_loss,omitempty"`
	RangeSteps int       `json:"range_steps,omitempty"`
	RangeS     float64   `json:"range_s"`
	// UtilityTarget is the held-out accuracy the rule asked for (before
	// the tolerance) and UtilityBaseline where it came from.
	UtilityTarget   float64 `json:"utility_target"`
	UtilityBaseline string  `json:"utility_baseline"`
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
