#!/usr/bin/python3
"""Independent NumPy reference for U-LiRA in package eval/score (ulira.go).

Writes testdata/score/ulira_ref.json. Written from the protocol's
description (docs/SCORE.md, "U-LiRA"), not from the Go code:

  Inputs: margins U (unlearned) and R (retrained), [K models, E examples].
  Folds: model m of a side is in fold f when floor(f*K/F) <= m <
  floor((f+1)*K/F); the same split on both sides.
  For each fold f, every example j: fit a Gaussian to the unlearned
  shadows' margins (the models not in fold f) and one to the retrained
  shadows' (mean; variance with ddof = 1). Variance "global": each side's
  variances replaced by their mean over the examples (within the fold).
  Variances floored at 1e-12. "auto": global when the fewest shadows per
  side in any fold is below 64, per example otherwise.
  Each target (a model of fold f, either side) gets the log-likelihood ratio
  log N(x; in) - log N(x; out); it is called "unlearned" when LR > 0.
  Per example: balanced accuracy = (TPR + TNR) / 2 over its K + K targets.
  Accuracy: mean over examples. AUC: all (example, target) LRs pooled,
  unlearned positive, P(pos > neg) + P(pos == neg) / 2, by brute force.

The cases are Gaussians of known separation d (in sd units: the ideal
accuracy is Phi(d/2), the ideal AUC of the pooled LRs Phi(d/sqrt 2)),
identical distributions (0.5 in expectation, since targets are disjoint from
shadows), separable samples (1.0), constants, unequal folds, and
heteroscedastic sides. "large_k" records the accuracy at K = 1000 next to
Phi(d/2); its inputs are not written (too large).

Run from the repository root:  /usr/bin/python3 testdata/score/make_ulira_ref.py
Add --study to print the accuracy's spread over independent ensembles as K
grows (the table in docs/SCORE.md); the study is not written to the fixture.
"""

import json
import math
import sys

import numpy as np

FLOOR = 1e-12
PER_EXAMPLE_SHADOWS = 64


def phi(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def fold_of(k, folds):
    out = np.empty(k, dtype=int)
    for f in range(folds):
        out[f * k // folds:(f + 1) * k // folds] = f
    return out


def gauss_logpdf(x, mu, var):
    return -0.5 * np.log(2 * np.pi * var) - (x - mu) ** 2 / (2 * var)


def ulira(U, R, folds=2, variance="auto", with_lr=False):
    k, e = U.shape
    assert R.shape == (k, e)
    fold = fold_of(k, folds)
    shadows = min(int(np.sum(fold != f)) for f in range(folds))
    assert shadows >= 2
    if variance == "auto":
        variance = "global" if shadows < PER_EXAMPLE_SHADOWS else "per_example"
    lr_u = np.empty((k, e))  # each model is a target in exactly one fold
    lr_r = np.empty((k, e))
    for f in range(folds):
        sh, tg = fold != f, fold == f
        fits = []
        for X in (U, R):
            mu = X[sh].mean(axis=0)
            var = X[sh].var(axis=0, ddof=1)
            if variance == "global":
                var = np.full(e, var.mean())
            fits.append((mu, np.maximum(var, FLOOR)))
        (mi, vi), (mo, vo) = fits
        for X, out in ((U, lr_u), (R, lr_r)):
            x = X[tg]
            out[tg] = gauss_logpdf(x, mi, vi) - gauss_logpdf(x, mo, vo)
    tpr = np.mean(lr_u > 0, axis=0)
    tnr = np.mean(lr_r <= 0, axis=0)
    acc = (tpr + tnr) / 2
    pos, neg = lr_u.ravel(), lr_r.ravel()
    if pos.size * neg.size <= 4_000_000:
        auc = float(np.mean((pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])))
    else:
        ns = np.sort(neg)
        lt = np.searchsorted(ns, pos, side="left")
        le = np.searchsorted(ns, pos, side="right")
        auc = float(np.sum(lt + 0.5 * (le - lt)) / (pos.size * neg.size))
    out = dict(accuracy=float(acc.mean()), examples=acc.tolist(), auc=auc, folds=folds,
               shadows=shadows, targets=k, variance=variance)
    if with_lr:
        out["lr_unlearned"] = lr_u.tolist()
        out["lr_retrained"] = lr_r.tolist()
    return out


def r6(a):
    # Inputs rounded to 1e-6 keep the file small; both readers parse the
    # same decimal to the same double.
    return np.round(a, 6)


def cases():
    rng = np.random.default_rng(47_5)
    out = {}
    for d in (0.5, 1.0, 2.0):
        R = r6(rng.normal(0.0, 1.0, size=(16, 20)))
        U = r6(rng.normal(d, 1.0, size=(16, 20)))
        out[f"shift_d{d}_k16"] = (U, R, {})
    U, R = out["shift_d1.0_k16"][:2]
    out["shift_d1.0_k16_per_example"] = (U, R, dict(variance="per_example"))
    out["shift_d1.0_k16_folds4"] = (U, R, dict(folds=4))
    out["shift_d1.0_k16_folds16"] = (U, R, dict(folds=16))
    out["identical_k64"] = (r6(rng.normal(0.0, 1.0, size=(64, 50))), r6(rng.normal(0.0, 1.0, size=(64, 50))), {})
    out["separable_k16"] = (r6(rng.normal(20.0, 1.0, size=(16, 10))), r6(rng.normal(0.0, 1.0, size=(16, 10))), {})
    out["constant_equal"] = (np.full((8, 3), 1.5), np.full((8, 3), 1.5), {})
    out["constant_apart"] = (np.full((8, 3), 1.0), np.full((8, 3), 1.001), {})
    # 128 models per side, two folds: 64 shadows, so auto is per example.
    out["shift_d0.5_k128_auto"] = (r6(rng.normal(0.5, 1.0, size=(128, 10))), r6(rng.normal(0.0, 1.0, size=(128, 10))), {})
    # uneven folds: K = 5 in two folds of 2 and 3 models
    out["uneven_k5"] = (r6(rng.normal(1.0, 1.0, size=(5, 6))), r6(rng.normal(0.0, 1.0, size=(5, 6))), {})
    # same means, the unlearned side twice as spread: only the variances
    # tell the sides apart; the log-likelihood ratios are written out.
    out["spread_k16_per_example"] = (r6(rng.normal(0.0, 2.0, size=(16, 4))), r6(rng.normal(0.0, 1.0, size=(16, 4))),
                                     dict(variance="per_example", with_lr=True))
    out["spread_k16_global"] = (out["spread_k16_per_example"][0], out["spread_k16_per_example"][1],
                                dict(variance="global", with_lr=True))
    # integer ties
    out["ties_integers"] = (rng.integers(0, 3, size=(16, 6)).astype(float), rng.integers(0, 4, size=(16, 6)).astype(float), {})
    return out


def large_k():
    rng = np.random.default_rng(20250)
    res = []
    for d in (0.5, 1.0, 2.0):
        k, e = 1000, 50
        U = rng.normal(d, 1.0, size=(k, e))
        R = rng.normal(0.0, 1.0, size=(k, e))
        r = ulira(U, R)
        res.append(dict(d=d, k=k, examples=e, accuracy=r["accuracy"], auc=r["auc"], variance=r["variance"],
                        ideal_accuracy=phi(d / 2), ideal_auc=phi(d / math.sqrt(2))))
    return res


def study():
    # Mean accuracy over 25 forget examples whose unlearned margins are
    # N(d, 1) and retrained N(0, 1), over 12 independent ensembles per K
    # (the table in docs/SCORE.md); not written to the fixture.
    rng = np.random.default_rng(5)
    print("| K | d | shadows | variance | accuracy mean | sd | ideal Φ(d/2) | per-example sd |")
    print("|---|---|---|---|---|---|---|---|")
    for d in (0.0, 0.5, 1.0):
        for k in (4, 8, 16, 32, 64, 128):
            accs, per = [], []
            for _ in range(12):
                r = ulira(rng.normal(d, 1.0, size=(k, 25)), rng.normal(0.0, 1.0, size=(k, 25)))
                accs.append(r["accuracy"])
                per.append(np.std(r["examples"]))
            print(f"| {k} | {d} | {r['shadows']} | {r['variance']} | {np.mean(accs):.3f} | {np.std(accs):.3f} | {phi(d / 2):.3f} | {np.mean(per):.3f} |")
    # The two variance modes on the same kind of ensembles.
    rng = np.random.default_rng(6)
    print()
    print("| K | d | global: mean | sd | per example: mean | sd |")
    print("|---|---|---|---|---|---|")
    for d in (0.5, 1.0):
        for k in (16, 32, 64, 128):
            row = []
            for v in ("global", "per_example"):
                a = [ulira(rng.normal(d, 1.0, size=(k, 25)), rng.normal(0.0, 1.0, size=(k, 25)), variance=v)["accuracy"]
                     for _ in range(12)]
                row += [np.mean(a), np.std(a)]
            print(f"| {k} | {d} | " + " | ".join(f"{x:.3f}" for x in row) + " |")


def main():
    if "--study" in sys.argv:
        study()
        return
    ref = {"floor": FLOOR, "per_example_shadows": PER_EXAMPLE_SHADOWS, "cases": {}}
    for name, (U, R, opt) in cases().items():
        kw = dict(opt)
        res = ulira(U, R, **kw)
        res.update(unlearned=U.tolist(), retrained=R.tolist(), option_folds=opt.get("folds", 0),
                   option_variance=opt.get("variance", ""))
        ref["cases"][name] = res
    ref["large_k"] = large_k()
    with open("testdata/score/ulira_ref.json", "w") as fh:
        json.dump(ref, fh, indent=None, separators=(",", ":"))
        fh.write("\n")
    for name, c in ref["cases"].items():
        print(f"{name:32s} acc {c['accuracy']:.4f} auc {c['auc']:.4f} {c['variance']} shadows {c['shadows']}")
    for c in ref["large_k"]:
        print(f"large K d={c['d']}: acc {c['accuracy']:.4f} (ideal {c['ideal_accuracy']:.4f}), auc {c['auc']:.4f} (ideal {c['ideal_auc']:.4f})")


if __name__ == "__main__":
    main()
