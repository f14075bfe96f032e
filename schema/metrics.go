package schema

// Metrics are one model's measurements on a dataset and forget set: the
// per-model section of metrics.json, inline at the top level of a Report
// and in each Section. eval.Metrics embeds it with what the JSON leaves out
// (predictions, example ids, the attacks' features).
type Metrics struct {
	Classes  int        `json:"classes"`
	Accuracy Accuracies `json:"accuracy"`
	Counts   Counts     `json:"counts"`
	PerClass PerClass   `json:"per_class"`
	MIA      *MIAScores `json:"mia,omitempty"`
	Timings  Timings    `json:"timings"`
}

// Accuracies hold accuracies (fractions in [0, 1]) or, in a Delta,
// differences of them. Forget and Retain are nil without a forget set (and
// Retain also when the forget set is the whole training split).
type Accuracies struct {
	Train  float64  `json:"train"`
	Test   float64  `json:"test"`
	Forget *float64 `json:"forget,omitempty"`
	Retain *float64 `json:"retain,omitempty"`
}

// AccuracyKeys are the names of the accuracies in metrics.json, in order.
var AccuracyKeys = []string{"train", "test", "forget", "retain"}

// Get returns the accuracy named key (one of AccuracyKeys); ok is false when
// it is absent.
func (a *Accuracies) Get(key string) (v float64, ok bool) {
	switch key {
	case "train":
		return a.Train, true
	case "test":
		return a.Test, true
	case "forget":
		if a.Forget != nil {
			return *a.Forget, true
		}
	case "retain":
		if a.Retain != nil {
			return *a.Retain, true
		}
	}
	return 0, false
}

// Counts are the number of examples in each split.
type Counts struct {
	Train  int  `json:"train"`
	Test   int  `json:"test"`
	Forget *int `json:"forget,omitempty"`
	Retain *int `json:"retain,omitempty"`
}

// ClassAccuracy is the accuracy on one class of a split; Accuracy is null
// in JSON when the split holds no example of the class.
type ClassAccuracy struct {
	N        int      `json:"n"`
	Correct  int      `json:"correct"`
	Accuracy *float64 `json:"accuracy"`
}

// PerClass holds per-class accuracies of each split, indexed by class.
type PerClass struct {
	Train  []ClassAccuracy `json:"train"`
	Test   []ClassAccuracy `json:"test"`
	Forget []ClassAccuracy `json:"forget,omitempty"`
	Retain []ClassAccuracy `json:"retain,omitempty"`
}

// Timings are wall times in seconds.
type Timings struct {
	ForwardS float64 `json:"forward_s"`
	MIAS     float64 `json:"mia_s"`
	TotalS   float64 `json:"total_s"`
}

// MIAScores are the attacks' scores, each a fraction in [0, 1]. The SVC
// scores are SalUn's: the fraction of the forget set the attack calls
// non-members (SalUn's "MIA-Efficacy"; higher means less is remembered).
// LossLR is the kit's cross-validated accuracy of telling forget losses from
// test losses (0.5 is chance; nil when the sets are too small to split).
type MIAScores struct {
	Correctness float64  `json:"correctness"`
	Confidence  float64  `json:"confidence"`
	Entropy     float64  `json:"entropy"`
	MEntropy    float64  `json:"m_entropy"`
	Prob        float64  `json:"prob"`
	LossLR      *float64 `json:"loss_lr"`
}

// MIAKeys are the names of the scores in metrics.json, in order.
var MIAKeys = []string{"correctness", "confidence", "entropy", "m_entropy", "prob", "loss_lr"}

// Get returns the score named key (one of MIAKeys); ok is false for an
// unknown key or an absent LossLR.
func (s *MIAScores) Get(key string) (v float64, ok bool) {
	if s == nil {
		return 0, false
	}
	switch key {
	case "correctness":
		return s.Correctness, true
	case "confidence":
		return s.Confidence, true
	case "entropy":
		return s.Entropy, true
	case "m_entropy":
		return s.MEntropy, true
	case "prob":
		return s.Prob, true
	case "loss_lr":
		if s.LossLR == nil {
			return 0, false
		}
		return *s.LossLR, true
	}
	return 0, false
}

// Delta holds Δ = oracle − model for every accuracy and MIA score (each in
// [−1, 1]), and AvgGap, the mean |Δ| over the forget, retain and test
// accuracies and the correctness MIA score (SalUn's "Avg. Gap" over UA, RA,
// TA and MIA-Efficacy; |Δ| of 1 − accuracy equals |Δ| of accuracy).
type Delta struct {
	Accuracy Accuracies `json:"accuracy"`
	MIA      *MIAScores `json:"mia,omitempty"`
	AvgGap   *float64   `json:"avg_gap,omitempty"`
}

// Agreement is the fraction of examples of each split on which two models
// predict the same class.
type Agreement struct {
	Train  float64  `json:"train"`
	Test   float64  `json:"test"`
	Forget *float64 `json:"forget,omitempty"`
	Retain *float64 `json:"retain,omitempty"`
}
