package score

import (
	"errors"
	"fmt"
	"math"
)

// Errors returned (wrapped with context) by the package.
var (
	// ErrShape: logits, labels or per-model rows that do not fit together.
	ErrShape = errors.New("score: shape mismatch")
	// ErrNonFinite: a statistic or accuracy that is NaN or infinite.
	ErrNonFinite = errors.New("score: non-finite value")
	// ErrTooFewModels: fewer than two models on a side, or the two sides
	// differ in their number of models.
	ErrTooFewModels = errors.New("score: too few models")
	// ErrOptions: an option out of its range.
	ErrOptions = errors.New("score: invalid option")
)

// Margin returns logit_y − log Σ_{j≠y} exp(logit_j) for one row of logits,
// the margin of KLoM (Georgiev et al., 2024), computed in float64 with the
// largest other logit factored out, so that it is finite for every finite
// row (|logits| up to float32's maximum) and exact where the softmax would
// round p_y to 1. The row needs at least two classes and 0 ≤ label <
// len(row); it panics otherwise (a programming error: the batch functions
// check their input).
func Margin(row []float32, label int) float64 {
	if len(row) < 2 || label < 0 || label >= len(row) {
		panic(fmt.Sprintf("score: Margin of a row of %d logits with label %d", len(row), label))
	}
	m := math.Inf(-1)
	for j, z := range row {
		if j != label && float64(z) > m {
			m = float64(z)
		}
	}
	var s float64
	for j, z := range row {
		if j != label {
			s += math.Exp(float64(z) - m)
		}
	}
	// s ≥ 1 (the maximum contributes exp(0)), so the logarithm is finite;
	// z_y − m first keeps ln s when both logits are huge.
	return (float64(row[label]) - m) - math.Log(s)
}

// LogitScaledConfidence returns log p_y − log(1 − p_y), p = softmax(row),
// the statistic of the NeurIPS 2023 unlearning competition. Algebraically
// log p_y = z_y − LSE(z) and log(1 − p_y) = LSE_{j≠y}(z) − LSE(z), so the
// two LSE(z) cancel and the statistic equals Margin exactly; this is how it
// is computed, which is stable where 1 − p_y underflows.
//
// The competition's code (google-deepmind/unlearning_evaluation, metric.py,
// compute_logit_scaled_confidence, after LiRA's score.py) instead
// exponentiates the max-shifted logits in float32, sums the wrong-class
// probabilities separately and adds 1e-45 inside both logarithms; it agrees
// with this value to about 1e-7 while |value| < ~87 and saturates
// near ±103.6 (= ln 1e45) beyond, where this function keeps the exact value.
func LogitScaledConfidence(row []float32, label int) float64 {
	return Margin(row, label)
}

// Margins applies Margin to each row of logits ([examples, classes],
// row-major) with its label. Non-finite logits are an ErrNonFinite error;
// a label out of range or a length that is not examples × classes is an
// ErrShape error.
func Margins(logits []float32, classes int, labels []int) ([]float64, error) {
	if classes < 2 {
		return nil, fmt.Errorf("%w: %d classes, need at least 2", ErrShape, classes)
	}
	if len(logits) != len(labels)*classes {
		return nil, fmt.Errorf("%w: %d logits for %d labels × %d classes", ErrShape, len(logits), len(labels), classes)
	}
	out := make([]float64, len(labels))
	for i, y := range labels {
		if y < 0 || y >= classes {
			return nil, fmt.Errorf("%w: label %d of example %d outside [0, %d)", ErrShape, y, i, classes)
		}
		row := logits[i*classes : (i+1)*classes]
		for _, z := range row {
			if math.IsNaN(float64(z)) || math.IsInf(float64(z), 0) {
				return nil, fmt.Errorf("%w: logits of example %d", ErrNonFinite, i)
			}
		}
		out[i] = Margin(row, y)
	}
	return out, nil
}

// Confidences applies LogitScaledConfidence to each row, as Margins does
// (the values are the same; the two names say which protocol they feed).
func Confidences(logits []float32, classes int, labels []int) ([]float64, error) {
	return Margins(logits, classes, labels)
}
