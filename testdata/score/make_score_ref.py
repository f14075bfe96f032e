#!/usr/bin/python3
"""Independent reference for package eval/score, written with NumPy only.

Writes testdata/score/ref.json: inputs and expected outputs for
  - the competition's per-example epsilon, its bucket points and F
    (google-deepmind/unlearning_evaluation, metric.py, as documented in
    eval/score/doc.go), computed here by brute force: every threshold (pair)
    is compared against every value with broadcasting, no sorting or
    running counts as in the Go code;
  - KLoM (data-unlearning-bench's binned KL of margins), both with the
    reference's np.digitize counting (the tool's default since issue 47)
    and with a closed last bin (KLoMOptions.CloseLastBin), on single
    examples and on three small ensembles whose mean KLoMs are issue 47's
    examples (4.08 closed vs 4.03 reference on Gaussians, 1.42 vs 1.25 on
    integer ties, 3.60 vs 5.82 with margins clipped at +-100);
  - the logit-scaled confidence of the competition's formula (float64
    softmax, no 1e-45 floor) on moderate logits.

Run from the repository root:  /usr/bin/python3 testdata/score/make_score_ref.py
Add --study to print the spread of F over independent ensembles as K grows
(the table in docs/SCORE.md); the study is not written to the fixture.
"""

import json
import math
import sys

import numpy as np

DELTA = 1e-5
CAP = 50.0
PER_UNIT = 100
BUFFER = 2.0


def np_linspace(start, stop, num):
    return np.linspace(start, stop, num=num)


def torch_linspace(start, end, steps):
    # torch.linspace's two-sided formula (its CUDA kernel), written out.
    if steps <= 0:
        return np.zeros(0)
    if steps == 1:
        return np.array([start])
    step = (end - start) / (steps - 1)
    i = np.arange(steps)
    half = steps // 2
    return np.where(i < half, start + step * i, end - step * (steps - 1 - i))


def eps_from_rates(tp, fp, n):
    """epsilon per test from counts of positives / negatives predicted positive."""
    tpr, fpr = tp / n, fp / n
    fnr, tnr = 1 - tpr, 1 - fpr
    out = np.full(tp.shape, np.nan)
    sep = (fpr + fnr == 0) & (tpr + tnr == 2)
    out[sep] = np.inf
    ok = ~sep & (fpr * fnr != 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.log(1 - DELTA - fpr[ok]) - np.log(fnr[ok])
        b = np.log(1 - DELTA - fnr[ok]) - np.log(fpr[ok])
    both = np.vstack([a, b])
    allnan = np.all(np.isnan(both), axis=0)
    m = np.where(allnan, np.nan, np.nanmax(np.where(np.isnan(both), -np.inf, both), axis=0))
    out[ok] = np.where(np.isnan(m), np.nan, np.maximum(m, 0))
    return out


def torch_linspace_f32(start, end, steps):
    # torch.linspace in float32 (its default dtype, as the competition calls
    # it): start, end and step rounded to float32, every operation in float32.
    if steps <= 0:
        return np.zeros(0, np.float32)
    start, end = np.float32(start), np.float32(end)
    if steps == 1:
        return np.array([start], np.float32)
    step = np.float32((end - start) / np.float32(steps - 1))
    i = np.arange(steps).astype(np.float32)
    half = steps // 2
    return np.where(np.arange(steps) < half, start + step * i, end - step * (np.float32(steps - 1) - i)).astype(np.float32)


def example_epsilon(u, r, exact_separation=True, float32_singles=False):
    """One example's epsilon. exact_separation adds each family's tightest
    test around its positive sample (the tool since issue 47); without it
    the result is the competition's grid alone (the tool before issue 47, or
    the reference where it does not fail). float32_singles builds the
    single-threshold grid in float32 as the reference does (torch.linspace's
    default dtype); the values are compared in float64 after promotion."""
    n = len(u)
    retrained_pos = bool(np.median(r) > np.median(u))
    pos, neg = (r, u) if retrained_pos else (u, r)
    pd, nd = pos.max() - pos.min(), neg.max() - neg.min()
    largest, smallest = (pd, nd) if pd > nd else (nd, pd)
    with np.errstate(invalid="ignore", divide="ignore"):
        ratio = np.float64(smallest) / np.float64(largest)
    if ratio < 0.01:
        return dict(epsilon=CAP, how="peaky", retrained_positive=retrained_pos)

    # double thresholds
    dp, dn = (neg, pos) if pd >= nd else (pos, neg)
    width = min(pd, nd)
    rmin = (dp.min() + width) - BUFFER
    rmax = dp.max() + BUFFER
    rights = np_linspace(rmin, rmax, int(np.ceil((rmax - rmin) * PER_UNIT)))
    nleft = int(np.ceil(2 * BUFFER * PER_UNIT))
    L = np.concatenate([np_linspace((tr - width) - BUFFER, (tr - width) + BUFFER, nleft) for tr in rights])
    R = np.repeat(rights, nleft)
    tp = ((L[:, None] <= dp[None, :]) & (dp[None, :] <= R[:, None])).sum(1).astype(float)
    fp = ((L[:, None] <= dn[None, :]) & (dn[None, :] <= R[:, None])).sum(1).astype(float)
    if exact_separation:
        tp = np.append(tp, float(n))
        fp = np.append(fp, float(np.sum((dn >= dp.min()) & (dn <= dp.max()))))
    e_d = eps_from_rates(tp, fp, n)

    # single thresholds
    allv = np.concatenate([pos, neg])
    lo, hi = allv.min(), allv.max()
    linspace = torch_linspace_f32 if float32_singles else torch_linspace
    T = linspace(lo, hi, int(np.ceil((hi - lo) * PER_UNIT))).astype(np.float64)
    if exact_separation:
        T = np.append(T, pos.min())
    tp = (pos[None, :] >= T[:, None]).sum(1).astype(float)
    fp = (neg[None, :] >= T[:, None]).sum(1).astype(float)
    e_s = eps_from_rates(tp, fp, n)

    e = np.concatenate([e_d, e_s])
    kept = e[~np.isnan(e)]
    if kept.size == 0:
        return dict(epsilon=0.0, how="none", retrained_positive=retrained_pos)
    best = kept.max()
    if np.isinf(best):
        return dict(epsilon=CAP, how="separated", retrained_positive=retrained_pos)
    return dict(epsilon=float(min(best, CAP)), how="threshold", retrained_positive=retrained_pos)


def points(eps, n):
    # Bucket value written from the description: bucket k = [k/2, (k+1)/2)
    # is worth 2^-k while (k+1)/2 <= ceil(ln(n-1)); beyond, 0.
    top = math.ceil(math.log(n - 1)) if n > 1 else -math.inf
    k = 0
    while (k + 1) * 0.5 <= top:
        if eps < (k + 1) * 0.5:
            return 2.0 ** -k
        k += 1
    return 0.0


def forget_score(U, R, **kw):
    """U, R: [models, examples]; kw as example_epsilon's."""
    n = U.shape[0]
    ex = [example_epsilon(U[:, j], R[:, j], **kw) for j in range(U.shape[1])]
    for e in ex:
        e["points"] = points(e["epsilon"], n)
    return float(np.mean([e["points"] for e in ex])), ex


def klom(p, q, bins=20, floor=1e-5, clip=100.0, digitize=True):
    p = np.clip(p, -clip, clip)
    q = np.clip(q, -clip, clip)
    lo, hi = min(p.min(), q.min()), max(p.max(), q.max())
    if lo >= hi:
        hi = lo + 1
    edges = np.linspace(lo, hi, bins + 1)
    if digitize:
        pi, qi = np.digitize(p, edges), np.digitize(q, edges)
        pc = np.array([np.sum(pi == i) for i in range(1, bins + 1)], float)
        qc = np.array([np.sum(qi == i) for i in range(1, bins + 1)], float)
    else:
        pc = np.histogram(p, edges)[0].astype(float)
        qc = np.histogram(q, edges)[0].astype(float)
    if pc.sum() == 0:
        return float("nan")
    pp = pc / pc.sum()
    qp = qc / qc.sum() if qc.sum() > 0 else qc
    qp = np.where(pp > 0, np.maximum(qp, floor), qp)
    qp = qp / qp.sum()
    m = pp > 0
    return float(np.sum(pp[m] * np.log(pp[m] / qp[m])))


def gauss(rng, n, ex, mu, sd=1.0):
    return rng.normal(mu, sd, size=(n, ex))


def cases():
    rng = np.random.default_rng(20231)
    out = {}
    for n in (4, 16, 64):
        for d in (0.0, 0.5, 1.0, 2.0, 4.0):
            U = gauss(rng, n, 6, 0.0)
            R = gauss(rng, n, 6, d)
            out[f"gauss_n{n}_d{d}"] = (U, R)
    # the very same values on both sides: every test has FPR = TPR
    U = gauss(rng, 16, 5, 0.0)
    out["identical_values"] = (U, U.copy())
    # constant and equal: no usable test
    out["constant_equal"] = (np.full((8, 2), 1.5), np.full((8, 2), 1.5))
    # constant and different: separated
    out["constant_apart"] = (np.zeros((8, 2)), np.ones((8, 2)))
    # separable Gaussians
    out["separable"] = (gauss(rng, 16, 4, 0.0), gauss(rng, 16, 4, 20.0))
    # separable by a gap smaller than the grid step, ranges alike
    out["separable_close"] = (np.linspace(0, 1, 16)[:, None].repeat(2, 1), np.linspace(1.001, 2.001, 16)[:, None].repeat(2, 1))
    # peaky: one sample's range under 1 % of the other's
    out["peaky"] = (0.3 + 1e-4 * gauss(rng, 16, 3, 0.0), gauss(rng, 16, 3, 0.0))
    # ties: integer values, many repeats, and values on the threshold grids
    U = rng.integers(0, 3, size=(16, 6)).astype(float)
    R = rng.integers(0, 4, size=(16, 6)).astype(float)
    out["ties_integers"] = (U, R)
    U = np.round(gauss(rng, 16, 6, 0.0), 1)
    R = np.round(gauss(rng, 16, 6, 0.7), 1)
    out["ties_tenths"] = (U, R)
    # equal medians (unlearned is positive), equal ranges
    U = np.array([[0.0], [1.0], [2.0], [3.0]])
    R = np.array([[0.5], [1.0], [2.0], [2.5]])
    out["equal_medians"] = (U, R)
    # two models only: F is 0 whatever the values
    out["two_models"] = (gauss(rng, 2, 3, 0.0), gauss(rng, 2, 3, 0.0))
    # large values, where the grid spans many units
    out["wide"] = (gauss(rng, 16, 3, 0.0, 30.0), gauss(rng, 16, 3, 5.0, 30.0))
    out.update(issue47_cases())
    return out


def even(n, lo, width):
    return lo + width * np.arange(n) / (n - 1)


def issue47_cases():
    """Issue 47, items 1 and 2 (the inputs of eval/score/issue47_test.go)."""
    n, out = 16, {}
    # Item 1: separable with a gap below the grid step, one example each.
    out["issue47_constant_gap"] = (np.zeros((n, 1)), np.full((n, 1), 0.001))
    out["issue47_tight_40"] = (even(n, 40, 0.003)[:, None], even(n, 40.005, 0.004)[:, None])
    out["issue47_interval"] = (even(n, 40.001, 0.002)[:, None],
                               np.concatenate([even(n // 2, 39.99, 0.01), even(n // 2, 40.005, 0.01)])[:, None])
    out["issue47_overlap_below_step"] = (even(n, 40, 0.003)[:, None], even(n, 40.002, 0.004)[:, None])
    # Item 1's synthetic forget set: 10 identical, one shifted integer
    # sample, one wide separation and four separations below the step.
    m = np.arange(n, dtype=float)[:, None]
    j = np.arange(10, dtype=float)[None, :]
    same = np.sin(7 * m + 13 * j) * 2
    U = np.hstack([same, m, 0.1 * m, np.zeros((n, 2)), 40 + 0.003 * m / 15, 40.005 + 0.004 * m / 15])
    R = np.hstack([same, m + 3, 10 + 0.1 * m, np.full((n, 2), 0.001), 40.005 + 0.004 * m / 15, 40 + 0.003 * m / 15])
    out["issue47_synthetic"] = (U, R)
    # Item 2: 12 of 16 unlearned values on 0.3, a float64 grid point that
    # float32 rounds up past 12 retrained values at 0.30000002.
    u = np.concatenate([[0.1, 0.1, 0.2, 0.4], np.full(12, 0.3)])
    r = np.concatenate([np.full(4, 0.1), np.full(12, 0.30000002)])
    out["issue47_float32_ties"] = (u[:, None], r[:, None])
    return out


def klom_cases():
    rng = np.random.default_rng(7)
    out = {}
    for d in (0.0, 1.0, 3.0):
        out[f"gauss_d{d}"] = (rng.normal(0, 1, 64), rng.normal(d, 1, 64))
    v = rng.normal(0, 1, 32)
    out["identical"] = (v, v.copy())
    out["constant_equal"] = (np.full(16, 2.0), np.full(16, 2.0))
    out["top_edge_ties"] = (np.array([0.0, 1.0, 1.0, 1.0, 0.5, 0.25]), np.array([0.0, 0.0, 0.5, 1.0, 0.75, 0.1]))
    out["clipped"] = (np.array([-500.0, 150.0, 20.0, 0.0]), np.array([-90.0, 300.0, 10.0, 1.0]))
    out["unequal_counts"] = (rng.normal(0, 1, 10), rng.normal(0.5, 1, 25))
    out["disjoint"] = (rng.normal(0, 0.1, 16), rng.normal(5, 0.1, 16))
    # every unlearned value on the top edge: the reference's digitize leaves
    # the unlearned histogram empty and returns NaN
    out["top_edge_only"] = (np.full(8, 150.0), np.array([90.0, 95.0, 100.0, 80.0, 120.0, 99.0]))
    return out


# Issue 47's mean KLoMs, reconstructed: [models, examples] ensembles found by
# a search over seeds and shifts (K = 16 models a side, 8 examples) whose
# means round to the issue's closed / reference pairs.
KLOM_ENSEMBLES_K, KLOM_ENSEMBLES_E = 16, 8
CLIP_CASE = (4271, 100.0, 60.0)  # seed, unlearned mean, retrained mean (sd 30)


def klom_ensembles():
    K, E = KLOM_ENSEMBLES_K, KLOM_ENSEMBLES_E
    out = {}
    rng = np.random.default_rng(856)
    out["issue47_gauss"] = (rng.normal(0, 1, (K, E)), rng.normal(0.8, 1, (K, E)), (4.08, 4.03))
    rng = np.random.default_rng(742)
    out["issue47_integer_ties"] = (np.round(rng.normal(0, 1, (K, E))), np.round(rng.normal(0.5, 1, (K, E))), (1.42, 1.25))
    seed, a, b = CLIP_CASE
    rng = np.random.default_rng(seed)
    out["issue47_clipped"] = (rng.normal(a, 30, (K, E)), rng.normal(b, 30, (K, E)), (3.60, 5.82))
    return out


def klom_default(p, q):
    """The tool's default: the reference's counts, except where they leave
    the unlearned histogram empty (the reference's NaN), which counts the top
    edge in the last bin for that example."""
    v = klom(p, q, digitize=True)
    return klom(p, q, digitize=False) if np.isnan(v) else v


def confidence_cases():
    rng = np.random.default_rng(11)
    logits = rng.normal(0, 4, size=(20, 10)).astype(np.float32)
    labels = rng.integers(0, 10, size=20)
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    py = p[np.arange(20), labels]
    pw = p.sum(1) - py
    pw = np.array([np.sum(np.delete(p[i], labels[i])) for i in range(20)])
    conf = np.log(py) - np.log(pw)
    return dict(classes=10, logits=logits.ravel().tolist(), labels=labels.tolist(), confidence=conf.tolist())


def study():
    # Spread of F and of mean epsilon over independent ensembles, K models per
    # side, forget examples whose two distributions are identical N(0,1)
    # (ideal unlearning) or shifted by 0.5 sd.
    rng = np.random.default_rng(3)
    print("| K | shift | E (max bucket end) | mean ε | F mean | F sd over 20 ensembles |")
    print("|---|---|---|---|---|---|")
    for d in (0.0, 0.5):
        for k in (4, 8, 16, 32, 64):
            fs, es = [], []
            for _ in range(20):
                U = rng.normal(0, 1, size=(k, 25))
                R = rng.normal(d, 1, size=(k, 25))
                f, ex = forget_score(U, R)
                fs.append(f)
                es.append(np.mean([e["epsilon"] for e in ex]))
            print(f"| {k} | {d} | {math.ceil(math.log(k - 1))} | {np.mean(es):.3f} | {np.mean(fs):.3f} | {np.std(fs):.3f} |")


def main():
    if "--study" in sys.argv:
        study()
        return
    ref = {"delta": DELTA, "cap": CAP, "epsilon": {}, "klom": {}, "points": []}
    for name, (U, R) in cases().items():
        f, ex = forget_score(U, R)
        ref["epsilon"][name] = dict(unlearned=U.tolist(), retrained=R.tolist(), forget_quality=f, examples=ex)
        if name.startswith("issue47_"):
            # What the grid alone gives (the tool before issue 47), and the
            # reference's float32 single-threshold grid.
            f0, ex0 = forget_score(U, R, exact_separation=False)
            f32, ex32 = forget_score(U, R, exact_separation=False, float32_singles=True)
            ref["epsilon"][name].update(grid_only=dict(forget_quality=f0, epsilon=[e["epsilon"] for e in ex0]),
                                        float32_grid=dict(forget_quality=f32, epsilon=[e["epsilon"] for e in ex32]))
    for name, (p, q) in klom_cases().items():
        d = klom(p, q, digitize=True)
        ref["klom"][name] = dict(unlearned=p.tolist(), retrained=q.tolist(),
                                 digitize=None if np.isnan(d) else d, default=klom_default(p, q),
                                 closed=klom(p, q, digitize=False))
    ref["klom_ensembles"] = {}
    for name, (U, R, issue) in klom_ensembles().items():
        d = [klom_default(U[:, j], R[:, j]) for j in range(U.shape[1])]
        c = [klom(U[:, j], R[:, j], digitize=False) for j in range(U.shape[1])]
        ref["klom_ensembles"][name] = dict(unlearned=U.tolist(), retrained=R.tolist(), default=d, closed=c,
                                           mean_default=float(np.mean(d)), mean_closed=float(np.mean(c)),
                                           issue_closed=issue[0], issue_reference=issue[1])
    for n in (2, 3, 4, 8, 16, 64, 512):
        for e in (0.0, 0.25, 0.4999999, 0.5, 0.75, 1.0, 1.5, 2.0, 2.5, 2.9999, 3.0, 6.4, 6.5, 6.9999, 7.0, 50.0):
            ref["points"].append(dict(models=n, epsilon=e, points=points(e, n)))
    ref["confidence"] = confidence_cases()
    with open("testdata/score/ref.json", "w") as fh:
        json.dump(ref, fh, indent=None, separators=(",", ":"))
        fh.write("\n")


if __name__ == "__main__":
    main()
