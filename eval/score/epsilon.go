package score

import (
	"fmt"
	"math"
	"slices"

	"github.com/unlearn-tool/unlearn/internal/par"
)

// The competition's constants (metric.py: DELTA, EPSILON_CAP,
// NUM_THRESHOLDS_PER_UNIT; the buffer, the peakiness ratio and the bucket
// width are literals there).
const (
	// Delta is the δ of the (ε, δ) estimate.
	Delta = 1e-5
	// EpsilonCap is the largest ε reported; perfect separation and a
	// degenerate ("peaky") sample get it.
	EpsilonCap = 50.0
	// ThresholdsPerUnit is the density of the threshold grids, per unit of
	// the statistic.
	ThresholdsPerUnit = 100
	// ThresholdBuffer widens the double-threshold grids on either side.
	ThresholdBuffer = 2.0
	// PeakyRatio: when the smaller sample range is below this fraction of
	// the larger one, ε is EpsilonCap without a threshold search.
	PeakyRatio = 0.01
	// BucketWidth is the width of the ε buckets of ForgetScore.
	BucketWidth = 0.5
)

// How an example's ε was decided.
const (
	// HowThreshold: the largest finite ε over the thresholds of both
	// families.
	HowThreshold = "threshold"
	// HowSeparated: some threshold (or interval) separates the two samples
	// perfectly (FPR = FNR = 0), so ε is infinite and capped at EpsilonCap.
	// Separation is detected exactly, however narrow the gap (see
	// exampleEpsilon), not only where a grid threshold falls in it.
	HowSeparated = "separated"
	// HowPeaky: one sample's range is below PeakyRatio times the other's;
	// ε is EpsilonCap without a search.
	HowPeaky = "peaky"
	// HowNone: every threshold has FPR = 0 or FNR = 0 and none separates
	// the samples; ε is 0. Both samples constant and equal (identical,
	// rightly 0) is the case met in practice; the other is two samples that
	// overlap within less than the grid step (1/ThresholdsPerUnit), which
	// the competition's grid cannot resolve. The competition's code fails
	// an assertion here.
	HowNone = "none"
)

// Rule names the threshold family of the best test.
const (
	// RuleSingle: "positive" when the statistic is ≥ t.
	RuleSingle = "single"
	// RuleDouble: "positive" when l ≤ statistic ≤ r, the positive class
	// being the sample with the smaller range.
	RuleDouble = "double"
)

// Epsilon is one example's ε estimate and the test that attained it.
type Epsilon struct {
	// Value is ε in [0, EpsilonCap].
	Value float64 `json:"epsilon"`
	// How the value was decided (HowThreshold, HowSeparated, HowPeaky,
	// HowNone).
	How string `json:"how"`
	// Rule, FPR and FNR describe the best threshold (HowThreshold and
	// HowSeparated only); the positive class is the one named by Rule.
	Rule string  `json:"rule,omitempty"`
	FPR  float64 `json:"fpr"`
	FNR  float64 `json:"fnr"`
	// RetrainedPositive: the retrained sample has the larger median, so it
	// is the single-threshold rule's positive class.
	RetrainedPositive bool `json:"retrained_positive"`
	// Points is the example's bucket value H(ε) (see Points).
	Points float64 `json:"points"`
}

// epsTable holds ε(a, b) for one sample size N: a positives and b negatives
// predicted positive, so FNR = (N−a)/N and FPR = b/N. Entry NaN means the
// threshold is discarded, +Inf perfect separation.
type epsTable struct {
	n   int
	eps []float64 // [(N+1) × (N+1)], index a·(N+1)+b
}

func newEpsTable(n int) *epsTable {
	rate := func(k int) float64 { return float64(k) / float64(n) }
	// log(1 − δ − rate), NaN when the argument is negative (numpy's log).
	lg1 := make([]float64, n+1)
	lgr := make([]float64, n+1)
	for k := 0; k <= n; k++ {
		v := 1 - Delta - rate(k)
		if v < 0 {
			lg1[k] = math.NaN()
		} else {
			lg1[k] = math.Log(v)
		}
		lgr[k] = math.Log(rate(k))
	}
	t := &epsTable{n: n, eps: make([]float64, (n+1)*(n+1))}
	for a := 0; a <= n; a++ {
		for b := 0; b <= n; b++ {
			fn, fp := n-a, b
			var e float64
			switch {
			case fp == 0 && fn == 0:
				e = math.Inf(1)
			case fp == 0 || fn == 0:
				e = math.NaN()
			default:
				t1 := lg1[fp] - lgr[fn] // log((1−δ−FPR)/FNR)
				t2 := lg1[fn] - lgr[fp] // log((1−δ−FNR)/FPR)
				switch {
				case math.IsNaN(t1) && math.IsNaN(t2):
					e = math.NaN()
				case math.IsNaN(t1):
					e = t2
				case math.IsNaN(t2):
					e = t1
				default:
					e = math.Max(t1, t2)
				}
				if e < 0 {
					e = 0
				}
			}
			t.eps[a*(n+1)+b] = e
		}
	}
	return t
}

// best tracks the largest ε over thresholds, first occurrence winning.
type best struct {
	e      float64
	a, b   int
	rule   string
	usable bool
}

func (bs *best) offer(t *epsTable, a, b int, rule string) {
	e := t.eps[a*(t.n+1)+b]
	if math.IsNaN(e) {
		return
	}
	if !bs.usable || e > bs.e {
		*bs = best{e: e, a: a, b: b, rule: rule, usable: true}
	}
}

// linspaceNumPy is numpy.linspace(start, stop, num): start + i·step with the
// last point set to stop.
func linspaceNumPy(start, stop float64, num int) []float64 {
	if num <= 0 {
		return nil
	}
	y := make([]float64, num)
	linspaceNumPyInto(y, start, stop)
	return y
}

// linspaceNumPyInto fills y with numpy.linspace(start, stop, len(y)).
func linspaceNumPyInto(y []float64, start, stop float64) {
	num := len(y)
	if num == 0 {
		return
	}
	if num == 1 {
		y[0] = start
		return
	}
	div := float64(num - 1)
	delta := stop - start
	step := delta / div
	for i := range y {
		if step == 0 {
			y[i] = float64(float64(i)/div)*delta + start
		} else {
			// The conversion keeps the product rounded on its own, as numpy
			// computes it (no fused multiply-add).
			y[i] = float64(float64(i)*step) + start
		}
	}
	y[num-1] = stop
}

// linspaceTorch is torch.linspace(start, end, steps) as its CUDA kernel
// computes it: start + step·i for the first half, end − step·(steps−1−i)
// for the second.
func linspaceTorch(start, end float64, steps int) []float64 {
	if steps <= 0 {
		return nil
	}
	y := make([]float64, steps)
	if steps == 1 {
		y[0] = start
		return y
	}
	step := (end - start) / float64(steps-1)
	half := steps / 2
	for i := range y {
		if i < half {
			y[i] = start + float64(step*float64(i))
		} else {
			y[i] = end - float64(step*float64(steps-1-i))
		}
	}
	return y
}

// median is numpy.median: the mean of the two middle values for an even
// count. s must be sorted.
func median(s []float64) float64 {
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// countLE returns #{v ∈ s : v ≤ x}, countLT #{v ∈ s : v < x}; s sorted.
func countLE(s []float64, x float64) int {
	i, _ := slices.BinarySearchFunc(s, x, func(v, x float64) int {
		if v <= x {
			return -1
		}
		return 1
	})
	return i
}

func countLT(s []float64, x float64) int {
	i, _ := slices.BinarySearchFunc(s, x, func(v, x float64) int {
		if v < x {
			return -1
		}
		return 1
	})
	return i
}

// ExampleEpsilon estimates ε for one example from its statistic under N
// unlearned and N retrained models (N ≥ 2, the same on both sides), as the
// competition defines it; the package documentation states the definition.
// Points is left 0 (it depends on the aggregate; ForgetScore fills it).
func ExampleEpsilon(unlearned, retrained []float64) (Epsilon, error) {
	n := len(unlearned)
	if n < 2 || len(retrained) != n {
		return Epsilon{}, fmt.Errorf("%w: %d unlearned and %d retrained values, need the same number ≥ 2",
			ErrTooFewModels, n, len(retrained))
	}
	for _, s := range [][]float64{unlearned, retrained} {
		for _, v := range s {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return Epsilon{}, fmt.Errorf("%w: %v", ErrNonFinite, v)
			}
		}
	}
	return exampleEpsilon(unlearned, retrained, newEpsTable(n)), nil
}

func exampleEpsilon(unlearned, retrained []float64, t *epsTable) Epsilon {
	n := len(unlearned)
	u := slices.Sorted(slices.Values(unlearned))
	r := slices.Sorted(slices.Values(retrained))
	out := Epsilon{RetrainedPositive: median(r) > median(u)}
	pos, neg := u, r
	if out.RetrainedPositive {
		pos, neg = r, u
	}
	posDiff := pos[n-1] - pos[0]
	negDiff := neg[n-1] - neg[0]
	largest, smallest := negDiff, posDiff
	if posDiff > negDiff {
		largest, smallest = posDiff, negDiff
	}
	// 0/0 is NaN, which is not below the ratio: two constant samples go on
	// to the threshold search, as in the reference.
	if smallest/largest < PeakyRatio {
		out.Value, out.How = EpsilonCap, HowPeaky
		return out
	}

	var bs best

	// Double-threshold family: the sample with the smaller range (the
	// retrained-or-unlearned "positive" above when the ranges are equal
	// swaps) is predicted inside [l, r].
	dp, dn := pos, neg
	if posDiff >= negDiff {
		dp, dn = neg, pos
	}
	width := smallest
	rightMin := (dp[0] + width) - ThresholdBuffer
	rightMax := dp[n-1] + ThresholdBuffer
	rights := linspaceNumPy(rightMin, rightMax, int(math.Ceil((rightMax-rightMin)*ThresholdsPerUnit)))
	numLeft := int(math.Ceil(2 * ThresholdBuffer * ThresholdsPerUnit))
	lefts := make([]float64, numLeft)
	for _, tr := range rights {
		pLE, nLE := countLE(dp, tr), countLE(dn, tr)
		linspaceNumPyInto(lefts, (tr-width)-ThresholdBuffer, (tr-width)+ThresholdBuffer)
		// lefts ascend: walk the two counts of values < l forward, and
		// offer a test only when they change (equal counts, equal ε).
		pLT, nLT := countLT(dp, lefts[0]), countLT(dn, lefts[0])
		bs.offer(t, max(pLE-pLT, 0), max(nLE-nLT, 0), RuleDouble)
		for _, tl := range lefts[1:] {
			moved := false
			for pLT < n && dp[pLT] < tl {
				pLT++
				moved = true
			}
			for nLT < n && dn[nLT] < tl {
				nLT++
				moved = true
			}
			if moved {
				bs.offer(t, max(pLE-pLT, 0), max(nLE-nLT, 0), RuleDouble)
			}
		}
	}
	// The family's own tightest test, [min, max] of its positive sample, off
	// the grid: it has FNR = 0, so it is discarded unless no negative lies
	// inside it, which is perfect separation by an interval. The grid finds
	// that only when a grid pair falls in the gaps around the positive
	// sample; this test finds it whatever the gaps' width (issue 47).
	bs.offer(t, n, countLE(dn, dp[n-1])-countLT(dn, dp[0]), RuleDouble)

	// Single-threshold family: the sample with the larger median is
	// predicted at or above t.
	lo, hi := min(pos[0], neg[0]), max(pos[n-1], neg[n-1])
	singles := linspaceTorch(lo, hi, int(math.Ceil((hi-lo)*ThresholdsPerUnit)))
	pLT, nLT := 0, 0
	for i, th := range singles {
		moved := i == 0
		for pLT < n && pos[pLT] < th {
			pLT++
			moved = true
		}
		for nLT < n && neg[nLT] < th {
			nLT++
			moved = true
		}
		if moved {
			bs.offer(t, n-pLT, n-nLT, RuleSingle)
		}
	}
	// Likewise the threshold at the positive sample's minimum: FNR = 0, so
	// discarded unless every negative lies below it, which is perfect
	// separation by a threshold. The grid's step is 1/ThresholdsPerUnit, and
	// with a gap narrower than that (0.0 against 0.001, or tight samples
	// near 40) no grid threshold separates the samples, every grid test has
	// FPR or FNR 0, and nothing survived: ε was 0 and the example scored a
	// full point although a threshold tells the two apart perfectly. Here
	// it is HowSeparated and gets EpsilonCap, as a separation the grid
	// resolves does.
	bs.offer(t, n, n-countLT(neg, pos[0]), RuleSingle)

	switch {
	case !bs.usable:
		out.How = HowNone
	case math.IsInf(bs.e, 1):
		out.Value, out.How = EpsilonCap, HowSeparated
	default:
		out.Value, out.How = min(bs.e, EpsilonCap), HowThreshold
	}
	if bs.usable {
		out.Rule = bs.rule
		out.FPR = float64(bs.b) / float64(n)
		out.FNR = float64(n-bs.a) / float64(n)
	}
	return out
}

// MaxEpsilon is ⌈ln(N − 1)⌉, the end of the last bucket for N models per
// side: with N samples the largest finite estimate is ln(N(1−δ) − 1) (one
// miss on one side, none on the other), just below ln(N − 1).
func MaxEpsilon(models int) float64 {
	return math.Ceil(math.Log(float64(models - 1)))
}

// Points is the competition's bucket value of ε for N models per side:
// buckets [0, 0.5), [0.5, 1), … up to MaxEpsilon(N) are worth 1, 1/2, 1/4,
// …; ε ≥ MaxEpsilon(N) (and NaN) is worth 0. With N = 2 there is no bucket
// and every example is worth 0.
func Points(eps float64, models int) float64 {
	maxEps := MaxEpsilon(models)
	start, pts := 0.0, 1.0
	for start+BucketWidth <= maxEps {
		if eps < start+BucketWidth {
			return pts
		}
		pts /= 2
		start += BucketWidth
	}
	return 0
}

// Forgetting is the forget quality F of one ensemble and its per-example
// parts.
type Forgetting struct {
	// F is the mean of the examples' Points, in [0, 1]; 1 means every
	// example's ε fell in the first bucket.
	F float64 `json:"forget_quality"`
	// Models is N, the number of models per side.
	Models int `json:"models"`
	// Examples holds each example's ε, in input order.
	Examples []Epsilon `json:"examples"`
}

// ForgetScore computes F from the statistic (LogitScaledConfidence) of each
// forget example under N unlearned and N retrained models, given as
// [model][example] (each row one model's values, all rows the same length).
// workers bounds the parallelism (≤ 0: GOMAXPROCS); the result does not
// depend on it.
func ForgetScore(unlearned, retrained [][]float64, workers int) (*Forgetting, error) {
	n, examples, err := checkEnsemble(unlearned, retrained)
	if err != nil {
		return nil, err
	}
	f := &Forgetting{Models: n, Examples: make([]Epsilon, examples)}
	t := newEpsTable(n)
	par.Range(examples, workers, func(lo, hi int) {
		u, r := make([]float64, n), make([]float64, n)
		for j := lo; j < hi; j++ {
			for m := range n {
				u[m], r[m] = unlearned[m][j], retrained[m][j]
			}
			e := exampleEpsilon(u, r, t)
			e.Points = Points(e.Value, n)
			f.Examples[j] = e
		}
	})
	var sum float64
	for _, e := range f.Examples {
		sum += e.Points
	}
	if examples > 0 {
		f.F = sum / float64(examples)
	}
	return f, nil
}

// checkEnsemble checks [model][example] matrices: the same number N ≥ 2 of
// models on both sides, rows of one length, finite values.
func checkEnsemble(unlearned, retrained [][]float64) (models, examples int, err error) {
	n := len(unlearned)
	if n < 2 || len(retrained) != n {
		return 0, 0, fmt.Errorf("%w: %d unlearned and %d retrained models, need the same number ≥ 2",
			ErrTooFewModels, n, len(retrained))
	}
	examples = len(unlearned[0])
	for side, rows := range [][][]float64{unlearned, retrained} {
		for m, row := range rows {
			if len(row) != examples {
				return 0, 0, fmt.Errorf("%w: model %d of side %d has %d values, model 0 of the unlearned side %d",
					ErrShape, m, side, len(row), examples)
			}
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return 0, 0, fmt.Errorf("%w: model %d, example %d: %v", ErrNonFinite, m, j, v)
				}
			}
		}
	}
	return n, examples, nil
}

// FinalScore is the competition's F · (RA_u/RA_r) · (TA_u/TA_r): the mean
// retain and test accuracies of the unlearned models over those of the
// retrained models (main.py). Accuracies are fractions; a zero retrained
// accuracy is an ErrNonFinite error.
func FinalScore(f float64, retainU, retainR, testU, testR float64) (float64, error) {
	if retainR == 0 || testR == 0 {
		return 0, fmt.Errorf("%w: retrained retain accuracy %v, test accuracy %v", ErrNonFinite, retainR, testR)
	}
	s := f * (retainU / retainR) * (testU / testR)
	if math.IsNaN(s) || math.IsInf(s, 0) {
		return 0, fmt.Errorf("%w: final score %v", ErrNonFinite, s)
	}
	return s, nil
}
