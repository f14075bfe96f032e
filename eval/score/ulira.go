package score

import (
	"fmt"
	"math"
	"slices"
)

// U-LiRA's settings (the package documentation gives the protocol).
const (
	// ULiRADefaultFolds is the number of folds when ULiRAOptions.Folds is 0:
	// each side's K models are split in two halves, each half the targets
	// once while the other half are the shadows.
	ULiRADefaultFolds = 2
	// ULiRAPerExampleShadows: with the automatic variance mode, per-example
	// variances are fitted only when every fold has at least this many
	// shadows per side; with fewer, one variance per side pooled over the
	// examples (LiRA's fixed-variance remedy for few shadow models).
	ULiRAPerExampleShadows = 64
	// ULiRAVarianceFloor is the least variance of a fitted Gaussian (σ ≥
	// 1e-6), so that constant shadows (a saturated margin) still give a
	// finite likelihood ratio.
	ULiRAVarianceFloor = 1e-12
)

// U-LiRA variance modes (ULiRAOptions.Variance, ULiRA.Variance).
const (
	// ULiRAVarianceAuto (the empty string) picks ULiRAVariancePerExample
	// from ULiRAPerExampleShadows shadows per side on, else
	// ULiRAVarianceGlobal.
	ULiRAVarianceAuto = ""
	// ULiRAVarianceGlobal: one variance per side and fold, the mean over
	// the forget examples of the per-example sample variances (the pooled
	// within-example variance).
	ULiRAVarianceGlobal = "global"
	// ULiRAVariancePerExample: each example's own sample variance per side.
	ULiRAVariancePerExample = "per_example"
)

// ULiRAOptions sets the attack. The zero value is 2 folds and the
// automatic variance mode.
type ULiRAOptions struct {
	// Folds F (0: ULiRADefaultFolds), 2 ≤ F ≤ K.
	Folds int
	// Variance is ULiRAVarianceAuto, ULiRAVarianceGlobal or
	// ULiRAVariancePerExample.
	Variance string
}

// ULiRA is the result of the per-example likelihood-ratio attack between
// unlearned and retrained models.
type ULiRA struct {
	// Accuracy is the mean of Examples over the forget set: 0.5 when the
	// attack cannot tell unlearned from retrained models, 1 when it tells
	// every target apart.
	Accuracy float64 `json:"accuracy"`
	// AUC is the area under the ROC curve of the likelihood ratios of all
	// (example, target) pairs, unlearned targets positive, ties counted
	// half: one threshold for every example, as LiRA's ROC curves.
	AUC float64 `json:"auc"`
	// Examples holds each forget example's balanced accuracy over its 2K
	// targets, in input order.
	Examples []float64 `json:"examples"`
	// Folds is F; Shadows the fewest shadow models per side in any fold
	// (K − ⌈K/F⌉); Targets the targets per side and example (K, each model
	// once).
	Folds   int `json:"folds"`
	Shadows int `json:"shadows"`
	Targets int `json:"targets"`
	// Variance is the mode used (ULiRAVarianceGlobal or
	// ULiRAVariancePerExample).
	Variance string `json:"variance"`
}

// ULiRAMinModels is the least K per side the attack accepts with F folds:
// every fold must leave at least two shadows per side (K − ⌈K/F⌉ ≥ 2), so
// 4 with two folds.
func ULiRAMinModels(folds int) int {
	k := folds
	for k-(k+folds-1)/folds < 2 {
		k++
	}
	return k
}

// uliraFolds assigns model m of K to fold f when ⌊f·K/F⌋ ≤ m < ⌊(f+1)·K/F⌋:
// contiguous blocks, as even as K allows.
func uliraFolds(k, folds int) []int {
	out := make([]int, k)
	for f := range folds {
		for m := f * k / folds; m < (f+1)*k/folds; m++ {
			out[m] = f
		}
	}
	return out
}

func (o ULiRAOptions) resolve(k int) (folds int, global bool, err error) {
	folds = o.Folds
	if folds == 0 {
		folds = ULiRADefaultFolds
	}
	if folds < 2 {
		return 0, false, fmt.Errorf("%w: U-LiRA folds %d, need at least 2", ErrOptions, o.Folds)
	}
	switch o.Variance {
	case ULiRAVarianceAuto, ULiRAVarianceGlobal, ULiRAVariancePerExample:
	default:
		return 0, false, fmt.Errorf("%w: U-LiRA variance %q (want %q, %q or empty)",
			ErrOptions, o.Variance, ULiRAVarianceGlobal, ULiRAVariancePerExample)
	}
	if k < ULiRAMinModels(folds) {
		return 0, false, fmt.Errorf("%w: U-LiRA with %d folds needs K ≥ %d models per side, have %d",
			ErrTooFewModels, folds, ULiRAMinModels(folds), k)
	}
	shadows := k - (k+folds-1)/folds
	switch o.Variance {
	case ULiRAVarianceGlobal:
		global = true
	case ULiRAVarianceAuto:
		global = shadows < ULiRAPerExampleShadows
	}
	return folds, global, nil
}

// ULiRAScore runs the per-example likelihood-ratio attack (U-LiRA; the
// package documentation gives the protocol) on the statistic of each forget
// example under K unlearned and K retrained models, [model][example] as
// ForgetScore takes them. It is deterministic. K below ULiRAMinModels is
// an ErrTooFewModels error.
func ULiRAScore(unlearned, retrained [][]float64, opt ULiRAOptions) (*ULiRA, error) {
	k, examples, err := checkEnsemble(unlearned, retrained)
	if err != nil {
		return nil, err
	}
	folds, global, err := opt.resolve(k)
	if err != nil {
		return nil, err
	}
	fold := uliraFolds(k, folds)
	acc, lrU, lrR, ok := ulira(unlearned, retrained, fold, fold, folds, global, examples, true)
	if !ok {
		// resolve guarantees two shadows per side in every fold.
		return nil, fmt.Errorf("%w: U-LiRA folds without shadows", ErrTooFewModels)
	}
	res := &ULiRA{Examples: acc, Folds: folds, Shadows: k - (k+folds-1)/folds, Targets: k,
		Variance: ULiRAVariancePerExample, AUC: auc(lrU, lrR)}
	if global {
		res.Variance = ULiRAVarianceGlobal
	}
	res.Accuracy = meanFloat(acc)
	return res, nil
}

func meanFloat(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return sum(v) / float64(len(v))
}

// ulira runs the attack on rows u and r ([model][example]) whose folds are
// fu and fr: in fold f, the rows of fold f are the targets and the other
// rows the shadows. It returns each example's balanced accuracy and, with
// keep, the log-likelihood ratios of the unlearned and retrained targets
// (fold by fold, example by example, row by row), or ok = false when a
// fold with targets has fewer than two shadows on a side. The two sides
// may differ in size (bootstrap resamples); every row is a target exactly
// once.
func ulira(u, r [][]float64, fu, fr []int, folds int, global bool, examples int,
	keep bool) (acc, lrU, lrR []float64, ok bool) {
	tpos := make([]int, examples) // unlearned targets called unlearned
	tneg := make([]int, examples) // retrained targets called retrained
	if keep {
		lrU = make([]float64, 0, len(u)*examples)
		lrR = make([]float64, 0, len(r)*examples)
	}
	muU, vU := make([]float64, examples), make([]float64, examples)
	muR, vR := make([]float64, examples), make([]float64, examples)
	for f := range folds {
		if !slices.Contains(fu, f) && !slices.Contains(fr, f) {
			continue
		}
		if !fit(u, fu, f, global, muU, vU) || !fit(r, fr, f, global, muR, vR) {
			return nil, nil, nil, false
		}
		for j := range examples {
			// log N(x; μ_in, σ_in) − log N(x; μ_out, σ_out), the 2π terms
			// cancelling; written so that equal fits give exactly 0.
			lr := func(x float64) float64 {
				dU, dR := x-muU[j], x-muR[j]
				return (0.5*math.Log(vR[j]) - 0.5*math.Log(vU[j])) + (dR*dR/(2*vR[j]) - dU*dU/(2*vU[j]))
			}
			for m, row := range u {
				if fu[m] == f {
					s := lr(row[j])
					if keep {
						lrU = append(lrU, s)
					}
					if s > 0 {
						tpos[j]++
					}
				}
			}
			for m, row := range r {
				if fr[m] == f {
					s := lr(row[j])
					if keep {
						lrR = append(lrR, s)
					}
					if s <= 0 {
						tneg[j]++
					}
				}
			}
		}
	}
	acc = make([]float64, examples)
	for j := range acc {
		acc[j] = (float64(tpos[j])/float64(len(u)) + float64(tneg[j])/float64(len(r))) / 2
	}
	return acc, lrU, lrR, true
}

// fit sets mu and v to each example's mean and variance (sample variance,
// n − 1) over the rows not in fold f; with global, every v is their mean
// over the examples. Variances are floored at ULiRAVarianceFloor. It
// returns false with fewer than two shadow rows.
func fit(rows [][]float64, fold []int, f int, global bool, mu, v []float64) bool {
	n := 0
	for _, g := range fold {
		if g != f {
			n++
		}
	}
	if n < 2 {
		return false
	}
	for j := range mu {
		var s float64
		for m, row := range rows {
			if fold[m] != f {
				s += row[j]
			}
		}
		mu[j] = s / float64(n)
		var ss float64
		for m, row := range rows {
			if fold[m] != f {
				d := row[j] - mu[j]
				ss += d * d
			}
		}
		v[j] = ss / float64(n-1)
	}
	if global {
		g := meanFloat(v)
		for j := range v {
			v[j] = g
		}
	}
	for j := range v {
		v[j] = max(v[j], ULiRAVarianceFloor)
	}
	return true
}

// auc is P(pos > neg) + P(pos = neg)/2 over all pairs: both sorted, then
// one merge.
func auc(pos, neg []float64) float64 {
	if len(pos) == 0 || len(neg) == 0 {
		return math.NaN()
	}
	ps := slices.Sorted(slices.Values(pos))
	ns := slices.Sorted(slices.Values(neg))
	var wins float64
	lt, le := 0, 0 // #{neg < p}, #{neg ≤ p} for the current p
	for _, p := range ps {
		for lt < len(ns) && ns[lt] < p {
			lt++
		}
		le = max(le, lt)
		for le < len(ns) && ns[le] <= p {
			le++
		}
		wins += float64(lt) + float64(le-lt)/2
	}
	return wins / (float64(len(pos)) * float64(len(neg)))
}
