package eval

import (
	"fmt"
	"math"

	"github.com/unlearn-tool/unlearn/schema"
)

// The oracle estimate: what a model retrained without the forget set would
// score, estimated from the input model alone.
//
// Removing the forget set changes the training split's class frequencies
// from π_c = n_c/N to π'_c = (n_c − f_c)/(N − |F|). A classifier trained
// with softmax cross-entropy estimates p(y|x) ∝ p(x|y)·π_y, so the same
// classifier trained under π' differs, to first order, by log(π'_c/π_c)
// added to each logit (the label-shift correction of Saerens et al., Neural
// Computation 2002, and the logit adjustment of Menon et al., ICLR 2021). The
// estimate applies that shift to the input model's test logits and measures
// the shifted predictions: on the whole test split (what the oracle's test
// accuracy is expected to be) and on the proxies' reference (the forget
// set's classes weighted like it: what the oracle's forget accuracy is
// expected to be, since the forget set is unseen data of those classes to
// the oracle). A class the forget set removes entirely gets −∞: the oracle
// never predicts it.
//
// What the estimate leaves out is the other half of the oracle's change:
// with fewer examples of a class the features learnt for it are worse too.
// On a model trained long on thousands of examples per class that part is
// small (the suite's small-data ResNet: estimate 85.2 % against the
// oracle's 83.5 % forget accuracy); on an undertrained model with a few
// hundred examples per class it is not (the bundled demo: 77.6 % against
// 69.75 %). regimes/*/RESULTS.md measure it per regime.

// PartialClassShare is how much more of a class's training examples than
// of the whole training split a forget set must take, without taking all
// of them, for the class to count as thinned (schema.OracleEstimate.Partial;
// 0.1: 10 points more): the case in which the estimate leaves out the
// oracle's worse features for that class. An IID forget set thins no
// class (each loses the split's share).
const PartialClassShare = 0.1

// OracleEstimateMethod names the estimate in metrics.json.
const OracleEstimateMethod = "prior-shift"

// EstimateOracle computes the prior-shift estimate from the input model's
// logits on the whole test split (test: labels and logits in split order),
// the training split's labels, the forget set (indices into the training
// split) and the proxies' reference (NewProxyReference; nil or IID: the
// whole test split).
func EstimateOracle(test Outputs, trainLabels, forget []int,
	ref *schema.ProxyReference) (*schema.OracleEstimate, error) {
	if err := test.check("oracle estimate"); err != nil {
		return nil, err
	}
	if test.Len() == 0 {
		return nil, fmt.Errorf("oracle estimate: %w", ErrNoTest)
	}
	if len(forget) == 0 {
		return nil, ErrEmptyForget
	}
	k := test.Classes
	n := make([]float64, k)
	f := make([]float64, k)
	for i, y := range trainLabels {
		if y < 0 || y >= k {
			return nil, fmt.Errorf("training example %d has label %d, outside [0, %d): %w", i, y, k, ErrShape)
		}
		n[y]++
	}
	for _, i := range forget {
		if i < 0 || i >= len(trainLabels) {
			return nil, fmt.Errorf("forget index %d outside [0, %d): %w", i, len(trainLabels), ErrShape)
		}
		f[trainLabels[i]]++
	}
	total, left := float64(len(trainLabels)), float64(len(trainLabels)-len(forget))
	if left <= 0 {
		return nil, fmt.Errorf("oracle estimate: %w", ErrNoRetain)
	}
	est := &schema.OracleEstimate{Method: OracleEstimateMethod, Shift: make([]float64, k)}
	shift := make([]float64, k)
	for c := range k {
		switch {
		case n[c] == 0:
			// A class without training examples: no frequency to shift.
		case n[c] == f[c]:
			shift[c] = math.Inf(-1)
			est.Removed = append(est.Removed, c)
		default:
			shift[c] = math.Log(((n[c] - f[c]) / left) / (n[c] / total))
			est.Shift[c] = shift[c]
			if f[c]/n[c]-float64(len(forget))/total >= PartialClassShare {
				est.Partial = append(est.Partial, c)
				if k := int(n[c] - f[c]); len(est.Partial) == 1 || k < est.PartialKept {
					est.PartialKept = k
				}
			}
		}
	}
	correct := make([]float64, test.Len())
	for i := range test.Len() {
		row := test.Logits[i*k : (i+1)*k]
		best, bv := -1, math.Inf(-1)
		for c, v := range row {
			s := float64(v) + shift[c]
			if best < 0 || s > bv {
				best, bv = c, s
			}
		}
		if best == test.Labels[i] && !math.IsInf(bv, -1) {
			correct[i] = 1
		}
	}
	est.TestAccuracy = mean(correct)
	if ref == nil || len(ref.Classes) == 0 {
		est.ReferenceAccuracy = est.TestAccuracy
	} else {
		acc, err := classWeighted(correct, test.Labels, k, ref.Classes, ref.Weights)
		if err != nil {
			return nil, err
		}
		est.ReferenceAccuracy = acc
	}
	var moved float64
	for c := range k {
		moved = max(moved, math.Abs(est.Shift[c]))
	}
	est.MaxShift = moved
	return est, nil
}
