// Package score measures forgetting per example over ensembles of models:
// K models unlearned with different seeds against K models retrained
// without the forget set. It computes, from model outputs only, the NeurIPS
// 2023 Machine Unlearning competition's forget quality F and final score,
// KLoM per example, and bootstrap intervals over the models. It runs no
// model and trains nothing; the caller supplies logits or the statistics.
// docs/SCORE.md says what the numbers mean and how large K must be.
//
// # Entry points
//
//	Margin, LogitScaledConfidence, Margins, Confidences   per-example statistics from logits
//	ExampleEpsilon, Points, MaxEpsilon                     one example's ε and its bucket value
//	ForgetScore                                            F over the forget set ([model][example])
//	FinalScore                                             F · (RA_u/RA_r) · (TA_u/TA_r)
//	KLoM, KLoMs                                            KL divergence of margin histograms
//	ULiRAScore, ULiRAMinModels                             per-example likelihood-ratio attack (U-LiRA)
//	Summarize                                              all of the above with bootstrap intervals
//
// # Per-example statistics
//
// The competition's statistic is the logit-scaled confidence
// log p_y − log(1 − p_y); KLoM's is the margin z_y − log Σ_{j≠y} exp z_j.
// They are the same number (log p_y = z_y − LSE(z) and log(1 − p_y) =
// LSE_{j≠y}(z) − LSE(z)), computed here once, in float64, with the largest
// other logit factored out: finite for any finite logits. The competition's
// code floors both probabilities at 1e-45 after a float32 exponential, so
// its values saturate near ±103.6 where ours stay exact (see
// LogitScaledConfidence).
//
// # ε and F: the definition implemented
//
// Source: google-deepmind/unlearning_evaluation, metric.py
// (compute_forget_score_from_confs, _get_epsilons,
// _get_single_threshold_rates, _get_double_threshold_rates) and main.py
// (the final score), read at commit ffae0fff4c3e9523b22618c47df6c26e4eebe0df;
// the competition is described in Triantafillou et al., "Are we making
// progress in unlearning? Findings from the first NeurIPS unlearning
// competition", arXiv:2406.09073 (2024), and in the organisers' note
// "Evaluation for the NeurIPS Machine Unlearning Competition" (August 2023).
// Where the code and the prose could differ, this package follows the code.
//
// For one forget example with values u_1..u_N (unlearned models) and
// r_1..r_N (retrained models), N ≥ 2 on both sides:
//
//  1. Positive class: the sample with the larger median (numpy's median;
//     on equal medians the unlearned sample is positive), negative the other.
//  2. Peakiness: with d⁺, d⁻ the ranges (max − min) of the two samples, if
//     min(d⁺,d⁻)/max(d⁺,d⁻) < 0.01 then ε = 50 (EpsilonCap) and the search
//     is skipped (HowPeaky). Two constant samples give 0/0, which is not
//     below 0.01, and go on to the search.
//  3. Double-threshold tests: the sample with the smaller range becomes
//     "positive" (on equal ranges the step-1 negative does), w its range,
//     m and M its minimum and maximum. Right thresholds r_i =
//     numpy.linspace(m + w − 2, M + 2, ⌈((M+2) − (m+w−2))·100⌉); for each,
//     left thresholds numpy.linspace(r_i − w − 2, r_i − w + 2, 400). A test
//     (l, r) predicts positive when l ≤ value ≤ r. Added (this package,
//     issue 47): the interval [m, M] itself.
//  4. Single-threshold tests: with lo and hi the extremes of both samples,
//     t_k = torch.linspace(lo, hi, ⌈(hi − lo)·100⌉) (none when lo = hi),
//     evaluated in float64; a test predicts positive when value ≥ t_k, the
//     positive class of step 1. Added (issue 47): the threshold at the
//     minimum of the step-1 positive sample.
//  5. Each test's rates are fractions of N: TPR, FNR on the positive
//     sample, FPR, TNR on the negative one. A test with FPR = FNR = 0 gives
//     ε = ∞; one with exactly one of FPR, FNR zero is discarded ("a sign of
//     too few samples"); otherwise
//     ε = max(0, max(ln((1 − δ − FPR)/FNR), ln((1 − δ − FNR)/FPR))),
//     δ = 1e-5, a term whose argument 1 − δ − rate is negative being left
//     out and the test discarded when both are.
//  6. The example's ε is the largest over all kept tests of both families,
//     clipped to [0, 50] (so ∞, perfect separation, becomes 50:
//     HowSeparated). When no test is kept ε = 0 (HowNone); the
//     competition's code fails an assertion there instead.
//  7. Buckets: with E = ⌈ln(N − 1)⌉ (MaxEpsilon), ε in [0, 0.5) is worth 1,
//     [0.5, 1) 1/2, [1, 1.5) 1/4, … halving per bucket up to E; ε ≥ E is
//     worth 0. Bucket k is [k/2, (k+1)/2): lower edge included.
//  8. F = the mean of the examples' points; final score = F · (RA_u/RA_r) ·
//     (TA_u/TA_r), each accuracy the mean over that side's N models.
//
// Separation below the grid step (issue 47). The grids are spaced about
// 1/100 apart, so two samples that a threshold separates by a smaller gap
// (all unlearned values 0.0, all retrained 0.001; tight samples near 40)
// have no grid threshold in the gap: every grid test then has FPR or FNR
// 0 and is discarded (the competition's code fails its assertion;
// returning ε = 0 would award the example a full point), or a
// few partial tests give a finite ε. Either way the samples an attacker
// tells apart perfectly scored as (nearly) indistinguishable. The two
// tests added in steps 3 and 4 are the families' own tightest tests around
// the positive sample; both have FNR = 0, so they are discarded (change
// nothing) unless no negative value falls inside, which is exactly
// perfect separation by a threshold or an interval. Separation is thus
// detected whatever the gap, and gets the value a separation the grid
// resolves gets: ε = ∞, reported as the cap 50 (HowSeparated), 0 points.
// The alternative, the largest finite ε the sample sizes allow
// (ln(N(1 − δ) − 1), 2.71 at N = 16, worth 1/32), was rejected: it would
// score a separation the grid misses above one it finds. Results differ
// from the reference only on separable samples whose gap no grid point
// hits. HowNone remains for samples nothing separates: identical
// constants (rightly ε = 0) and samples that overlap within less than the
// grid step, which the competition's grids cannot resolve (ε = 0 there is
// a limit of the metric, not a measurement).
//
// Threshold grid precision (issue 47). The competition calls torch.linspace
// without a dtype, so its single-threshold grid is float32 and compared
// with float64 statistics after promotion; this package evaluates the
// same formula in float64. The two differ only for a value lying between
// a grid point's float64 and float32 roundings: with lo = 0.1, hi = 0.4
// the grid point 0.3 is exact in float64 and 0.30000001192… in float32,
// so 12 unlearned values at 0.3 and 12 retrained ones at 0.30000002 are
// split by the float32 threshold (ε = ln 12 = 2.48) and not by any float64
// one (ε = ln 2 = 0.69, from an interval): two buckets apart. float64 is
// kept on purpose: the grid is meant to be the points of linspace(lo, hi),
// and whether float32 rounding lands a threshold between ties is an
// accident of representation, not a property of the samples
// (TestEpsilonThresholdGridFloat64).
//
// What δ = 1e-5 does: rates are multiples of 1/N, and δ only enters as
// 1 − δ − rate, so for any practical N (1/N ≫ 1e-5) it changes ε by under
// 1e-4 and never decides a bucket by itself. Events rarer than 1/N are
// invisible to N samples, so the estimate is effectively an ε at δ ≈ 1/N,
// and a finite estimate cannot exceed ln(N(1 − δ) − 1) < ln(N − 1) ≤ E:
// with N = 16 every finite ε is below 2.71, E = 3, and an example scores
// at least 1/32 unless separated or peaky.
//
// Numerics against the reference: the code computes rates in float32 and
// ε from them in float32; this package uses float64 throughout, so ε agrees
// to about 1e-6 and a bucket could differ only for an ε within that of a
// multiple of 0.5. Threshold grids follow numpy's and torch's formulas
// (step·i + start, torch's two-sided form, no fused multiply-add); the
// reference ran torch on CUDA, whose compiler may fuse, so a threshold can
// differ in its last bit, which matters only for a value equal to it.
// Enumeration is exact, not approximate: for each right threshold the left
// grid is swept with running counts over the sorted samples.
//
// # KLoM
//
// Source: Georgiev et al., "Attribute-to-Delete: Machine Unlearning via
// Datamodel Matching", arXiv:2410.23232 (2024), appendix E.1, and its
// reference code RoyRin/data-unlearning-bench (unlearning_bench/eval.py,
// compute_binned_KL_div and kl_from_margins). Per example: clip both
// samples of margins to [−100, 100]; 20 equal-width bins from the smallest
// to the largest value of the two samples together (edges
// numpy.linspace(lo, hi, 21); when lo = hi, hi = lo + 1); histogram each
// sample and normalise; where the unlearned histogram P_u has mass, floor
// the retrained one P_r at 1e-5 and renormalise it; KLoM = Σ P_u ln(P_u/P_r)
// (nats; scipy.stats.entropy, which renormalises, as the reference does).
// Bins count as np.digitize does in the reference: [e_i, e_{i+1}), so a
// value equal to the top edge, the largest value of the two samples, is in
// no bin and left out of both histograms (every margin clipped to +100 when
// any is). Until issue 47 this package closed the last bin instead
// (numpy.histogram's convention, every model counted), which moved the mean
// KLoM away from published numbers on most inputs; KLoMOptions.CloseLastBin
// keeps that convention. One difference remains: where the reference's
// counts leave the unlearned histogram empty (every unlearned margin on the
// top edge, e.g. all clipped at +100 while some retrained margin is lower),
// the reference returns NaN (0/0), which would make the mean NaN; this
// package counts the top edge in the last bin for that example instead, so
// the unlearned point mass is compared with the retrained histogram. The
// paper's text was not available to check its bin count; 20 is the
// reference code's.
//
// # U-LiRA
//
// Source: Hayes et al., "Inexact Unlearning Needs More Careful Evaluations
// to Avoid a False Sense of Privacy", SaTML 2025, arXiv:2403.01218, after
// LiRA (Carlini et al., "Membership Inference Attacks From First
// Principles", IEEE S&P 2022). This is the attack on the models an audit
// already has (one original, K unlearning runs), not the paper's protocol;
// docs/SCORE.md says what that changes. For the same statistic as ε,
// [model][example], K ≥ ULiRAMinModels models per side:
//
//  1. Folds: model m of each side is in fold f when ⌊f·K/F⌋ ≤ m <
//     ⌊(f+1)·K/F⌋ (F = 2 by default), the same split on both sides.
//  2. For each fold f and example j, the models outside fold f are the
//     shadows: fit N(μ_in, σ²_in) to the unlearned shadows' values and
//     N(μ_out, σ²_out) to the retrained shadows' (mean; sample variance,
//     n − 1). With the global variance, each side's σ² is the mean of its
//     per-example variances over the forget set (the pooled within-example
//     variance of that fold's shadows; LiRA's code takes the spread of all
//     values, which would add the spread between examples). Variances are
//     floored at 1e-12.
//  3. Each model of fold f, on either side, is a target: its score is
//     LR = log N(x; μ_in, σ²_in) − log N(x; μ_out, σ²_out), and the attack
//     calls it unlearned when LR > 0 (equal priors: K models a side). Every
//     model is a target exactly once and never fits a Gaussian that scores
//     it.
//  4. Per example: balanced accuracy (TPR + TNR)/2 over its K unlearned and
//     K retrained targets; ULiRA.Accuracy is its mean over the forget set.
//     AUC: all (example, target) ratios pooled, unlearned positive, ties
//     counted half.
//
// The variance mode is automatic unless set: per example when every fold
// has at least ULiRAPerExampleShadows (64) shadows per side, else global,
// following LiRA's finding that per-example variances need many shadow
// models; with two folds that is K ≥ 128. Identical distributions give 0.5
// in expectation (the targets are independent of the fits that score them),
// separated ones 1; at large K the accuracy between N(0, 1) and N(d, 1)
// approaches Φ(d/2) (TestULiRALargeK). Equal constant samples give LR = 0
// everywhere: every target is called retrained, accuracy exactly 0.5.
// Everything is deterministic.
//
// # Intervals
//
// Summarize resamples models, not examples: B (default 200) times it draws
// K unlearned and K retrained models with replacement, independently per
// side, from a PCG stream seeded by BootstrapOptions.Seed (all draws made
// before any work, so the result does not depend on parallelism), and
// recomputes F, the final score, the mean KLoM and U-LiRA's mean accuracy.
// The interval covers the variability from which models were trained, with
// the forget set fixed. For U-LiRA each copy of a model in a resample keeps
// that model's fold, so a target is never among its own shadows (folds by
// position in the resample would let a copy be both, which raised the
// resamples' accuracy by 0.08 on identical distributions at K = 8); a
// resample in which a fold with targets keeps fewer than two shadows on a
// side (all copies in one fold: rare from K = 8 on) is left out of
// U-LiRA's interval.
//
// A plain percentile interval would be wrong here: a resample repeats
// models, so each example's two samples hold fewer distinct values, which
// raises ε and KLoM. Measured on identical Gaussians (K = 16, 50 examples)
// the whole percentile interval of F lay below the estimate and that of
// the mean KLoM above it. So the interval reports the resamples' spread
// about their own median, [median − q_lo, q_hi − median] with q the
// (1−level)/2 and (1+level)/2 quantiles (numpy's linear rule), placed
// around the full-ensemble estimate, and Interval.Shift records the median's
// offset. This is a heuristic: it assumes the repeats move the statistic
// without changing its spread much. docs/SCORE.md compares it with the
// spread of F over independent ensembles.
//
// # Conventions
//
// Statistics are [model][example] with the same N on both sides (KLoM
// allows different counts); inputs are never modified; non-finite values are
// ErrNonFinite errors, mismatched shapes ErrShape, fewer than two models
// ErrTooFewModels. Results do not depend on the number of workers.
package score
