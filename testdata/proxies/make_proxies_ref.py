#!/usr/bin/python3
"""Reference numbers for the oracle-free proxies of eval/proxies.go.

Run from the repository root with Debian's Python (python3-numpy 1.24,
python3-scipy 1.10, python3-sklearn 1.2); it takes a second:

    /usr/bin/python3 testdata/proxies/make_proxies_ref.py

Independence: nothing here calls the Go code or reads its output. The
fixture is synthetic: seeded float32 logits for a training split of 600 and
a test split of 300 examples of 10 classes (unequal class counts; class 9
has no test example), whose true-class margin differs by group so that
accuracies, losses and the attack have something to find. It is written to
ref.npz (train_logits [600,10] f32, train_labels, test_logits [300,10] f32,
test_labels, and per case <case>_forget, <case>_holdout as int64 ids), the
expected numbers to ref.json. eval's TestProxiesMatchNumPy recomputes every
number from ref.npz.

Definitions (eval/proxies.go, ProxyReference and ComputeProxies):

IID test: Pearson's chi^2 = sum_c (n_c - n p_c)^2 / (n p_c) over the classes
present in the training split, n_c the forget set's class counts, p_c the
training split's class shares; dof = k - 1; critical value
scipy.stats.chi2.ppf(1 - alpha, dof), alpha = 1e-3. IID unless chi^2 >
critical.

Reference: IID -> the whole test split, plain accuracy and mean loss.
Non-IID -> the test examples of the forget set's classes that have test
examples; accuracy and loss = sum_c w_c * (per-class mean), w_c the forget
set's class shares over those classes (renormalised).

Proxies: held-out and forget accuracy (first arg-max == label, as
numpy.argmax) and mean cross-entropy -log softmax(z)_y in float64 from the
float32 logits; forget_gap = forget accuracy - reference accuracy.

MIA: feature per example (confidence p_y, or entropy -sum p log p); members =
held-out (label 1), non-members = reference (label 0), the larger group
thinned to the smaller's size k by taking rows floor(i*n/k), i < k;
sklearn SVC(C=3, gamma='auto', kernel='rbf') fitted on them (members first,
then non-members); each score = 1 - mean(predict(group)) for the whole
forget, reference and held-out groups.

MatchedAccuracy: the test split's accuracy re-weighted to the held-out
labels' class shares (classes with test examples only, renormalised).
"""
import json
import os

import numpy as np
from scipy.stats import chi2
from sklearn.svm import SVC

HERE = os.path.dirname(os.path.abspath(__file__))
C = 10
ALPHA = 1e-3


def make_split(rng, counts):
    labels = np.concatenate([np.full(n, c) for c, n in enumerate(counts)])
    rng.shuffle(labels)
    return labels.astype(np.int64)


def logits_for(rng, labels, margin):
    z = rng.normal(0, 1, (len(labels), C))
    z[np.arange(len(labels)), labels] += margin + rng.normal(0, 1.5, len(labels))
    return z.astype(np.float32)


def softmax_parts(z32):
    z = z32.astype(np.float64)
    m = z.max(axis=1, keepdims=True)
    e = np.exp(z - m)
    s = e.sum(axis=1, keepdims=True)
    logp = (z - m) - np.log(s)
    return e / s, logp


def features(z32, y):
    p, logp = softmax_parts(z32)
    n = len(y)
    correct = (np.argmax(z32, axis=1) == y).astype(np.float64)
    loss = -logp[np.arange(n), y]
    conf = p[np.arange(n), y]
    ent = -np.where(p > 0, p * logp, 0.0).sum(axis=1)
    return dict(correct=correct, loss=loss, confidence=conf, entropy=ent)


def reference(train_y, test_y, forget):
    n = len(forget)
    ntrain = np.bincount(train_y, minlength=C)
    nforget = np.bincount(train_y[forget], minlength=C)
    ntest = np.bincount(test_y, minlength=C)
    present = ntrain > 0
    e = n * ntrain[present] / len(train_y)
    stat = float((((nforget[present] - e) ** 2) / e).sum())
    dof = int(present.sum()) - 1
    crit = float(chi2.ppf(1 - ALPHA, dof)) if dof >= 1 else 0.0
    iid = dof < 1 or not stat > crit
    if iid:
        return dict(iid=True, chi_square=stat, dof=dof, critical=crit, classes=[], weights=[],
                    test=list(range(len(test_y))))
    classes = [c for c in range(C) if nforget[c] > 0 and ntest[c] > 0]
    cov = sum(nforget[c] for c in classes)
    weights = [nforget[c] / cov for c in classes]
    test = [i for i, y in enumerate(test_y) if y in classes]
    return dict(iid=False, chi_square=stat, dof=dof, critical=crit, classes=classes,
                weights=weights, test=test)


def weighted(v, y, classes, weights):
    return float(sum(w * v[y == c].mean() for c, w in zip(classes, weights)))


def evenly(n, k):
    return [i * n // k for i in range(k)]


def mia(feat, fh, fr, ff):
    xin, xout = fh[feat], fr[feat]
    k = min(len(xin), len(xout))
    x = np.concatenate([xin[evenly(len(xin), k)], xout[evenly(len(xout), k)]]).reshape(-1, 1)
    y = np.concatenate([np.ones(k), np.zeros(k)])
    clf = SVC(C=3, gamma="auto", kernel="rbf").fit(x, y)
    score = lambda v: float(1 - clf.predict(v.reshape(-1, 1)).mean())
    return dict(feature=feat, forget=score(ff[feat]), reference=score(fr[feat]), holdout=score(fh[feat]))


def main():
    rng = np.random.default_rng(20240808)
    train_counts = [70, 50, 65, 55, 60, 80, 45, 60, 55, 60]
    test_counts = [35, 30, 40, 25, 30, 45, 20, 40, 35, 0]
    train_y = make_split(rng, train_counts)
    test_y = make_split(rng, test_counts)
    train_z = logits_for(rng, train_y, 3.0)
    test_z = logits_for(rng, test_y, 1.5)
    ids = np.arange(len(train_y))

    cases = {}
    # iid: a random tenth of the training split
    cases["iid"] = rng.choice(ids, 60, replace=False)
    # noniid: classes 2, 5 and 9 (9 has no test example)
    pool = ids[np.isin(train_y, [2, 5, 9])]
    cases["noniid"] = rng.choice(pool, 70, replace=False)
    # small: 6 examples of 6 classes (too few for the test: IID)
    cases["small"] = np.array([ids[train_y == c][0] for c in range(6)])
    # onecls: 8 examples of class 3 (non-IID even at this size)
    cases["onecls"] = ids[train_y == 3][:8]

    # the forget set is memorised harder than the rest
    arrays = dict(train_labels=train_y, test_labels=test_y)
    out = dict(classes=C, alpha=ALPHA, cases={})
    for name, forget in cases.items():
        forget = np.sort(forget)
        train_z[forget] = logits_for(rng, train_y[forget], 4.0)
        rest = np.setdiff1d(ids, forget)
        holdout = np.sort(rng.choice(rest, 80, replace=False))
        arrays[name + "_forget"] = forget.astype(np.int64)
        arrays[name + "_holdout"] = holdout.astype(np.int64)
    arrays["train_logits"] = train_z
    arrays["test_logits"] = test_z

    for name in cases:
        forget, holdout = arrays[name + "_forget"], arrays[name + "_holdout"]
        ref = reference(train_y, test_y, forget)
        ff = features(train_z[forget], train_y[forget])
        fh = features(train_z[holdout], train_y[holdout])
        rt = np.array(ref["test"], dtype=np.int64)
        fr = features(test_z[rt], test_y[rt])
        if ref["iid"]:
            racc, rloss = float(fr["correct"].mean()), float(fr["loss"].mean())
        else:
            racc = weighted(fr["correct"], test_y[rt], ref["classes"], ref["weights"])
            rloss = weighted(fr["loss"], test_y[rt], ref["classes"], ref["weights"])
        # matched accuracy: test accuracy weighted like the held-out labels
        ft = features(test_z, test_y)
        hc = np.bincount(train_y[holdout], minlength=C)
        ntest = np.bincount(test_y, minlength=C)
        mc = [c for c in range(C) if hc[c] > 0 and ntest[c] > 0]
        tot = sum(hc[c] for c in mc)
        matched = weighted(ft["correct"], test_y, mc, [hc[c] / tot for c in mc])
        out["cases"][name] = dict(
            reference=dict(iid=ref["iid"], chi_square=ref["chi_square"], dof=ref["dof"],
                           critical=ref["critical"], classes=ref["classes"], weights=ref["weights"],
                           n_test=len(ref["test"]), test=ref["test"]),
            proxies=dict(holdout_accuracy=float(fh["correct"].mean()), holdout_loss=float(fh["loss"].mean()),
                         forget_accuracy=float(ff["correct"].mean()), forget_loss=float(ff["loss"].mean()),
                         reference_accuracy=racc, reference_loss=rloss,
                         forget_gap=float(ff["correct"].mean()) - racc),
            mia=[mia(f, fh, fr, ff) for f in ("confidence", "entropy")],
            matched_accuracy=matched,
        )
    np.savez_compressed(os.path.join(HERE, "ref.npz"), **arrays)
    with open(os.path.join(HERE, "ref.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    for name, c in out["cases"].items():
        r = c["reference"]
        print(name, "iid" if r["iid"] else "non-iid", "chi2 %.2f crit %.2f" % (r["chi_square"], r["critical"]),
              "ref", r["classes"], r["n_test"], {k: round(v, 4) for k, v in c["proxies"].items()},
              [(m["feature"], round(m["forget"], 3), round(m["reference"], 3), round(m["holdout"], 3)) for m in c["mia"]])


if __name__ == "__main__":
    main()
