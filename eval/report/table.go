package report

import (
	"github.com/unlearn-tool/unlearn/schema"
)

// Row is one line of the metrics table: a metric of the model, of the
// oracle and Δ = oracle − model. Absent values are nil.
type Row struct {
	Group string // "accuracy", "mia", "agreement", "summary"
	Name  string // the metrics.json key
	// Before is the original model's value when rep.Before is set (an
	// unlearning run: Model is then the unlearned model).
	Before *float64
	Model  *float64
	Oracle *float64
	Delta  *float64
	// Help explains the metric in a few words.
	Help string
}

var accuracyHelp = map[string]string{
	"train":  "accuracy on the whole training split",
	"test":   "accuracy on the test split (generalisation)",
	"forget": "accuracy on the forget set: should fall to the oracle's",
	"retain": "accuracy on the retained training examples: should stay",
}

var miaHelp = map[string]string{
	"correctness": "SVC on [prediction correct]: share of forget set called non-member",
	"confidence":  "SVC on the true label's probability: share called non-member",
	"entropy":     "SVC on the prediction entropy: share called non-member",
	"m_entropy":   "SVC on Song & Mittal's modified entropy: share called non-member",
	"prob":        "SVC on the probability vector: share called non-member",
	"loss_lr":     "logistic regression on losses, forget vs test: accuracy (0.5 = chance)",
}

// Rows returns the table of rep: accuracies, MIA scores, agreement with the
// oracle and the average gap.
func Rows(rep *schema.Report) []Row {
	var rows []Row
	var oracle, before *schema.Metrics
	if rep.Oracle != nil {
		oracle = rep.Oracle.Metrics
	}
	if rep.Before != nil {
		before = rep.Before.Metrics
	}
	for _, k := range schema.AccuracyKeys {
		r := Row{Group: "accuracy", Name: k, Help: accuracyHelp[k]}
		if rep.Metrics != nil {
			r.Model = ptr(rep.Accuracy.Get(k))
		}
		if oracle != nil {
			r.Oracle = ptr(oracle.Accuracy.Get(k))
		}
		if before != nil {
			r.Before = ptr(before.Accuracy.Get(k))
		}
		if rep.Delta != nil {
			r.Delta = ptr(rep.Delta.Accuracy.Get(k))
		}
		if r.Model != nil || r.Oracle != nil {
			rows = append(rows, r)
		}
	}
	if (rep.Metrics != nil && rep.MIA != nil) || (oracle != nil && oracle.MIA != nil) {
		for _, k := range schema.MIAKeys {
			r := Row{Group: "mia", Name: k, Help: miaHelp[k]}
			if rep.Metrics != nil {
				r.Model = ptr(rep.MIA.Get(k))
			}
			if oracle != nil {
				r.Oracle = ptr(oracle.MIA.Get(k))
			}
			if before != nil && before.MIA != nil {
				r.Before = ptr(before.MIA.Get(k))
			}
			if rep.Delta != nil && rep.Delta.MIA != nil {
				r.Delta = ptr(rep.Delta.MIA.Get(k))
			}
			rows = append(rows, r)
		}
	}
	if a := rep.Agreement; a != nil {
		for _, k := range []string{"forget", "retain", "test"} {
			var v *float64
			switch k {
			case "forget":
				v = a.Forget
			case "retain":
				v = a.Retain
			case "test":
				v = &a.Test
			}
			if v != nil {
				rows = append(rows, Row{Group: "agreement", Name: k, Model: v,
					Help: "share of " + k + " examples on which model and oracle predict the same class"})
			}
		}
	}
	if rep.Delta != nil && rep.Delta.AvgGap != nil {
		rows = append(rows, Row{Group: "summary", Name: "avg_gap", Delta: rep.Delta.AvgGap,
			Help: "mean |Δ| over forget, retain and test accuracy and MIA correctness (SalUn's Avg. Gap)"})
	}
	return rows
}

func ptr(v float64, ok bool) *float64 {
	if !ok {
		return nil
	}
	return &v
}
