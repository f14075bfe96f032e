package score

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/unlearn-tool/unlearn/internal/par"
)

// Ensemble is what the K unlearned and K retrained models give on the
// forget set: the per-example statistic (Margin, equal to
// LogitScaledConfidence) as [model][example], and each model's retain and
// test accuracy (fractions). The accuracies are optional: without them
// (all four nil) there is no final score.
type Ensemble struct {
	Unlearned, Retrained [][]float64
	// One accuracy per model, in the order of the rows above.
	UnlearnedRetainAcc, RetrainedRetainAcc []float64
	UnlearnedTestAcc, RetrainedTestAcc     []float64
}

func (e Ensemble) hasAccuracies() bool {
	return e.UnlearnedRetainAcc != nil || e.RetrainedRetainAcc != nil ||
		e.UnlearnedTestAcc != nil || e.RetrainedTestAcc != nil
}

// BootstrapOptions sets Summarize's intervals.
type BootstrapOptions struct {
	// Resamples is the number of bootstrap resamples B (default 200; 0
	// means the default, a negative value none: intervals collapse to the
	// estimate).
	Resamples int
	// Level is the two-sided coverage of the percentile intervals (default
	// 0.95).
	Level float64
	// Seed seeds the resampling (PCG, math/rand/v2); equal seeds give equal
	// intervals whatever Workers is.
	Seed uint64
	// KLoM sets the histograms of the mean KLoM.
	KLoM KLoMOptions
	// ULiRA sets the likelihood-ratio attack (skipped when K is below
	// ULiRAMinModels).
	ULiRA ULiRAOptions
	// Workers bounds the parallelism (≤ 0: GOMAXPROCS).
	Workers int
}

// Interval is an estimate from all K models with a bootstrap interval
// [Lo, Hi] over resampled models: the percentile spread of the resamples
// around their median, re-centred on the estimate (the package
// documentation says why).
type Interval struct {
	Estimate float64 `json:"estimate"`
	Lo       float64 `json:"lo"`
	Hi       float64 `json:"hi"`
	// Shift is the resamples' median minus the estimate: how far repeated
	// models move the statistic (F down, KLoM up), which the interval
	// removes.
	Shift float64 `json:"bootstrap_shift"`
}

// Summary is the forgetting evidence of one ensemble.
type Summary struct {
	// Forgetting holds F and every example's ε from all K models.
	Forgetting *Forgetting `json:"forgetting"`
	// KLoM is every example's KLoM from all K models.
	KLoM []float64 `json:"klom"`
	// F, Final (nil without accuracies) and MeanKLoM with their intervals.
	F        Interval  `json:"forget_quality"`
	Final    *Interval `json:"final_score,omitempty"`
	MeanKLoM Interval  `json:"mean_klom"`
	// ULiRA is the likelihood-ratio attack from all K models and
	// ULiRAAccuracy its mean accuracy with an interval; both nil when K is
	// below ULiRAMinModels.
	ULiRA         *ULiRA    `json:"ulira,omitempty"`
	ULiRAAccuracy *Interval `json:"ulira_accuracy,omitempty"`
	// The bootstrap's settings, for the record.
	Resamples int     `json:"resamples"`
	Level     float64 `json:"level"`
	Seed      uint64  `json:"seed"`
}

type point struct{ f, final, klom, ulira float64 }

// uliraPlan is U-LiRA's setting in the resamples: the fold of each
// original model, the same on both sides, and the variance mode.
type uliraPlan struct {
	fold   []int
	folds  int
	global bool
}

// evaluate computes F, the final score and the mean KLoM of the ensemble
// restricted to the model rows iu (unlearned) and ir (retrained), and with
// a plan U-LiRA's mean accuracy (NaN when a fold lacks shadows).
func evaluate(e Ensemble, iu, ir []int, t *epsTable, opt KLoMOptions, plan *uliraPlan,
	workers int) (point, *Forgetting, []float64) {
	pick := func(rows [][]float64, idx []int) [][]float64 {
		out := make([][]float64, len(idx))
		for i, m := range idx {
			out[i] = rows[m]
		}
		return out
	}
	u, r := pick(e.Unlearned, iu), pick(e.Retrained, ir)
	n, examples := len(iu), len(e.Unlearned[0])
	f := &Forgetting{Models: n, Examples: make([]Epsilon, examples)}
	kl := make([]float64, examples)
	par.Range(examples, workers, func(lo, hi int) {
		su, sr := make([]float64, n), make([]float64, n)
		for j := lo; j < hi; j++ {
			for m := range n {
				su[m], sr[m] = u[m][j], r[m][j]
			}
			ep := exampleEpsilon(su, sr, t)
			ep.Points = Points(ep.Value, n)
			f.Examples[j] = ep
			kl[j] = klom(su, sr, opt)
		}
	})
	var p point
	var sp float64
	for j := range examples {
		sp += f.Examples[j].Points
		p.klom += kl[j]
	}
	if examples > 0 {
		f.F = sp / float64(examples)
		p.klom /= float64(examples)
	}
	p.f = f.F
	if plan != nil {
		// A resampled row keeps its original model's fold, so copies of one
		// model are never both a target and a shadow of it.
		folds := func(idx []int) []int {
			out := make([]int, len(idx))
			for i, m := range idx {
				out[i] = plan.fold[m]
			}
			return out
		}
		p.ulira = math.NaN()
		if acc, _, _, ok := ulira(u, r, folds(iu), folds(ir), plan.folds, plan.global, examples, false); ok {
			p.ulira = meanFloat(acc)
		}
	}
	if e.hasAccuracies() {
		mean := func(acc []float64, idx []int) float64 {
			var s float64
			for _, m := range idx {
				s += acc[m]
			}
			return s / float64(len(idx))
		}
		ra, rr := mean(e.UnlearnedRetainAcc, iu), mean(e.RetrainedRetainAcc, ir)
		ta, tr := mean(e.UnlearnedTestAcc, iu), mean(e.RetrainedTestAcc, ir)
		if rr == 0 || tr == 0 {
			p.final = math.NaN()
		} else {
			p.final = p.f * (ra / rr) * (ta / tr)
		}
	}
	return p, f, kl
}

// quantile is numpy.quantile's default (linear) on sorted s.
func quantile(s []float64, q float64) float64 {
	h := q * float64(len(s)-1)
	lo := math.Floor(h)
	i := int(lo)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (h-lo)*(s[i+1]-s[i])
}

// Summarize computes F, the final score, the mean KLoM and (K ≥
// ULiRAMinModels) U-LiRA's mean accuracy over the forget examples from all
// K models, and percentile bootstrap intervals for each: every resample
// draws K unlearned and K retrained models with replacement (independently
// on the two sides; a model's statistics and accuracies stay together) and
// recomputes the numbers, U-LiRA with each copy in its original model's
// fold. The package documentation says what the intervals do and do not
// cover.
func Summarize(e Ensemble, opt BootstrapOptions) (*Summary, error) {
	n, examples, err := checkEnsemble(e.Unlearned, e.Retrained)
	if err != nil {
		return nil, err
	}
	if examples == 0 {
		return nil, fmt.Errorf("%w: no forget example", ErrShape)
	}
	if e.hasAccuracies() {
		for _, acc := range [][]float64{e.UnlearnedRetainAcc, e.RetrainedRetainAcc, e.UnlearnedTestAcc, e.RetrainedTestAcc} {
			if len(acc) != n {
				return nil, fmt.Errorf("%w: %d accuracies for %d models", ErrShape, len(acc), n)
			}
			for _, a := range acc {
				if !(a >= 0 && a <= 1) {
					return nil, fmt.Errorf("%w: accuracy %v outside [0, 1]", ErrNonFinite, a)
				}
			}
		}
	}
	if opt.Resamples == 0 {
		opt.Resamples = 200
	}
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	if !(opt.Level > 0 && opt.Level < 1) {
		return nil, fmt.Errorf("%w: bootstrap level %v", ErrOptions, opt.Level)
	}
	kopt, err := opt.KLoM.withDefaults()
	if err != nil {
		return nil, err
	}
	t := newEpsTable(n)
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var plan *uliraPlan
	if folds, global, err := opt.ULiRA.resolve(n); err == nil {
		plan = &uliraPlan{fold: uliraFolds(n, folds), folds: folds, global: global}
	} else if !errors.Is(err, ErrTooFewModels) {
		return nil, err
	}
	p, f, kl := evaluate(e, all, all, t, kopt, nil, opt.Workers)
	s := &Summary{Forgetting: f, KLoM: kl, Resamples: max(opt.Resamples, 0), Level: opt.Level, Seed: opt.Seed}
	if plan != nil {
		if s.ULiRA, err = ULiRAScore(e.Unlearned, e.Retrained, opt.ULiRA); err != nil {
			return nil, err
		}
		a := s.ULiRA.Accuracy
		s.ULiRAAccuracy = &Interval{Estimate: a, Lo: a, Hi: a}
	}
	if e.hasAccuracies() {
		if math.IsNaN(p.final) {
			return nil, fmt.Errorf("%w: a retrained mean accuracy is 0", ErrNonFinite)
		}
		s.Final = &Interval{Estimate: p.final}
	}
	s.F = Interval{Estimate: p.f, Lo: p.f, Hi: p.f}
	s.MeanKLoM = Interval{Estimate: p.klom, Lo: p.klom, Hi: p.klom}
	if s.Final != nil {
		s.Final.Lo, s.Final.Hi = p.final, p.final
	}
	b := s.Resamples
	if b == 0 {
		return s, nil
	}
	// All indices are drawn up front from one stream, so the resamples do
	// not depend on the parallel schedule.
	rng := rand.New(rand.NewPCG(opt.Seed, 0x73636f7265)) // "score"
	idx := make([][2][]int, b)
	for i := range idx {
		for side := range 2 {
			idx[i][side] = make([]int, n)
			for m := range n {
				idx[i][side][m] = rng.IntN(n)
			}
		}
	}
	pts := make([]point, b)
	par.Range(b, opt.Workers, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			pts[i], _, _ = evaluate(e, idx[i][0], idx[i][1], t, kopt, plan, 1)
		}
	})
	interval := func(get func(point) float64, iv *Interval) {
		v := make([]float64, 0, b)
		for _, q := range pts {
			if x := get(q); !math.IsNaN(x) {
				v = append(v, x)
			}
		}
		if len(v) == 0 {
			return
		}
		slices.Sort(v)
		mid := quantile(v, 0.5)
		iv.Shift = mid - iv.Estimate
		iv.Lo = iv.Estimate - (mid - quantile(v, (1-opt.Level)/2))
		iv.Hi = iv.Estimate + (quantile(v, (1+opt.Level)/2) - mid)
	}
	interval(func(q point) float64 { return q.f }, &s.F)
	interval(func(q point) float64 { return q.klom }, &s.MeanKLoM)
	if s.Final != nil {
		interval(func(q point) float64 { return q.final }, s.Final)
	}
	if s.ULiRAAccuracy != nil {
		interval(func(q point) float64 { return q.ulira }, s.ULiRAAccuracy)
	}
	// The bias-corrected interval (the estimate ± the resamples' spread
	// around their median) can leave the quantity's range near its ends:
	// U-LiRA's accuracy reached 1.16. Each bound is clipped to the range:
	// F and the attack's accuracy in [0, 1], KLoM and the final score ≥ 0.
	s.F.clip(0, 1)
	s.MeanKLoM.clip(0, math.Inf(1))
	if s.Final != nil {
		s.Final.clip(0, math.Inf(1))
	}
	if s.ULiRAAccuracy != nil {
		s.ULiRAAccuracy.clip(0, 1)
	}
	return s, nil
}

// clip keeps the interval's bounds in [lo, hi].
func (iv *Interval) clip(lo, hi float64) {
	iv.Lo = min(max(iv.Lo, lo), hi)
	iv.Hi = min(max(iv.Hi, lo), hi)
}
