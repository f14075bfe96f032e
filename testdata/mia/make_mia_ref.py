#!/usr/bin/python3
"""Reference numbers for the membership-inference attacks of eval/mia.go.

Run from the repository root with Debian's Python (python3-torch 1.13,
python3-sklearn 1.2, python3-numpy 1.24, python3-onnx 1.12):

    /usr/bin/python3 testdata/mia/make_mia_ref.py

It needs nothing but the committed fixtures (testdata/fashion, the bundled
models, testdata/demo/forget_nonIID.txt) and takes about 20 s on 2 cores.

Independence. The logits come from PyTorch, not ONNX Runtime: the models are
rebuilt from the module classes of testdata/make_testdata.py (which trained
and exported them) with every weight read from the ONNX initializers, and the
rebuild is checked against the logits that script stored (ref/*_logits.npz).
The features are computed here with NumPy in float64, the attacks with
scikit-learn. The Go tests compute the features from the logits stored here,
so a feature or attack difference cannot hide behind a runtime difference;
a separate Go test runs the models through ONNX Runtime end to end.

What is computed, for the bundled model (resnet_small_train.onnx) and the
oracle (demo/oracle_resnet_small.onnx), with the forget set
demo/forget_nonIID.txt on testdata/fashion:

SVC_MIA as SalUn (OPTML-Group/Unlearn-Saliency, Classification/main_forget.py
and evaluation/SVC_MIA.py): shadow members = the first |test| retain examples
in id order (torch.utils.data.Subset(retain, range(test_len))), shadow
non-members = the test split, target = the forget set, passed as SalUn's
`target_test`; one SVC(C=3, gamma='auto', kernel='rbf') per feature fitted on
members (label 1) and non-members (label 0); score = 1 - mean(predict(forget)),
the fraction of the forget set called non-members. Features, per example,
from the softmax p of the logits z and the label y:

  correctness  [argmax z == y]
  confidence   p_y
  entropy      -sum_i p_i log p_i         (0 log 0 = 0, as SalUn's entropy())
  m_entropy    Song & Mittal's Mentr: -(1-p_y) log p_y - sum_{i!=y} p_i log(1-p_i),
               every log clipped below at log(1e-30) (Song & Mittal's
               _log_value; SalUn uses the same 1e-30)
  prob         the vector p

  Numerics (float64): log p = (z - max z) - log S with S = sum exp(z - max z);
  1 - p_i = (S - e_i)/S, except at the arg-max where S - e_i cancels and the
  sum of the other e_j is used instead.

  m_entropy_salun  SalUn's m_entropy() as written, which differs from Mentr:
               it indexes modified_probs[:, labels] (every row, every class
               that occurs as a label in the group) instead of one entry per
               row, and takes log_reverse_prob from p, not from 1 - p. Per
               row it computes -sum_{c in L} (1-p_c) log p_c - sum_{c not in L}
               p_c log p_c with L the set of labels present in that group
               (members, non-members and forget set each on their own).

Besides the float64 features, the script also runs SalUn's code path itself
(torch float32 softmax and SalUn's entropy()/m_entropy() transcribed) and
reports those scores as `salun_torch`: what SalUn would print for the model.

Loss attack (NeurIPS 2023 unlearning challenge starting kit,
unlearning-challenge/starting-kit, unlearning-CIFAR10.ipynb and simple_mia):
per-example cross-entropy losses of the forget set (members, label 1) and the
test split (label 0), the larger set randomly subsampled to the size of the
smaller (the kit shuffles the forget losses and keeps len(test) of them; here
the test split is the larger one), samples ordered test first; the score is
the mean accuracy of LogisticRegression() (L2, C=1, lbfgs) over
StratifiedShuffleSplit(n_splits=10, random_state=0) (test_size 0.1) with
cross_val_score. The subsample and the ten test sets are stored so the Go test
can run its own logistic regression on exactly the same folds.

Writes testdata/mia/ref.npz (float32 logits and features of the three groups,
int labels, sklearn's predictions on the forget set, the loss-attack folds and
fitted coefficients; features are stored as float32 to keep the file small,
so comparisons against them need a relative tolerance of about 1e-7) and
testdata/mia/ref.json (scores, accuracies, versions, group sizes).
"""
import json
import os
import sys
import time

import numpy as np
import onnx
import sklearn
import torch
import torch.nn.functional as F
from onnx import numpy_helper
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedShuffleSplit, cross_val_score
from sklearn.svm import SVC

HERE = os.path.dirname(os.path.abspath(__file__))
TD = os.path.dirname(HERE)
sys.path.insert(0, TD)
import make_testdata as mt  # noqa: E402  (module classes and IDX reader; no side effects)

torch.set_num_threads(2)
EPS = 1e-30
FEATURES = ["correctness", "confidence", "entropy", "m_entropy", "m_entropy_salun", "prob"]
MODELS = {"model": "resnet_small_train.onnx", "oracle": os.path.join("demo", "oracle_resnet_small.onnx")}
REFNAME = {"model": "resnet_small_train", "oracle": "oracle_resnet_small"}


def load_model(path):
    model = mt.ResNetSmall()
    sd = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()) for i in onnx.load(path).graph.initializer}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    assert all(k.endswith("num_batches_tracked") for k in missing), missing
    return model.eval()


def read_ids(path):
    with open(path) as f:
        return np.array([int(l) for l in f if l.strip() and not l.startswith("#")], dtype=np.int64)


@torch.no_grad()
def logits_of(model, x):
    return torch.cat([model(x[i:i + 500]) for i in range(0, len(x), 500)]).numpy().astype(np.float32)


# ---------------------------------------------------------------- features (NumPy, float64)


def softmax_parts(z):
    z = z.astype(np.float64)
    n = len(z)
    amax = z.argmax(1)
    sh = z - z.max(1, keepdims=True)
    e = np.exp(sh)
    s = e.sum(1, keepdims=True)
    logp = sh - np.log(s)
    p = e / s
    rest = s - e  # sum of the other e_j ...
    e0 = e.copy()
    e0[np.arange(n), amax] = 0
    rest[np.arange(n), amax] = e0.sum(1)  # ... summed directly at the arg-max, where s - e cancels
    log1mp = np.log(rest) - np.log(s)  # log(1 - p)
    return p, logp, rest / s, log1mp


def features(z, y):
    n = len(z)
    r = np.arange(n)
    p, logp, one_minus_p, log1mp = softmax_parts(z)
    f = {}
    f["correctness"] = (z.argmax(1) == y).astype(np.float64)[:, None]
    f["confidence"] = p[r, y][:, None]
    f["entropy"] = -np.where(p > 0, p * logp, 0.0).sum(1)[:, None]
    lp = np.maximum(logp, np.log(EPS))
    l1 = np.maximum(log1mp, np.log(EPS))
    terms = -p * l1
    terms[r, y] = -one_minus_p[r, y] * lp[r, y]
    f["m_entropy"] = terms.sum(1)[:, None]
    # SalUn's m_entropy as written (see the module doc string)
    lps = np.where(p > 0, logp, np.log(EPS))
    inl = np.zeros(z.shape[1], dtype=bool)
    inl[np.unique(y)] = True
    f["m_entropy_salun"] = -np.where(inl[None, :], one_minus_p * lps, p * lps).sum(1)[:, None]
    f["prob"] = p
    return f


# ---------------------------------------------------------------- SalUn's own code path (torch float32)


def salun_entropy(p, dim=-1, keepdim=False):
    return -torch.where(p > 0, p * p.log(), p.new([0.0])).sum(dim=dim, keepdim=keepdim)


def salun_m_entropy(p, labels, dim=-1, keepdim=False):
    log_prob = torch.where(p > 0, p.log(), torch.tensor(1e-30).to(p.device).log())
    reverse_prob = 1 - p
    log_reverse_prob = torch.where(p > 0, p.log(), torch.tensor(1e-30).to(p.device).log())
    modified_probs = p.clone()
    modified_probs[:, labels] = reverse_prob[:, labels]
    modified_log_probs = log_reverse_prob.clone()
    modified_log_probs[:, labels] = log_prob[:, labels]
    return -torch.sum(modified_probs * modified_log_probs, dim=dim, keepdim=keepdim)


def salun_features(z, y):
    prob = F.softmax(torch.from_numpy(z), dim=-1)
    lab = torch.from_numpy(y)
    return {
        "correctness": (torch.argmax(prob, axis=1) == lab).int(),
        "confidence": torch.gather(prob, 1, lab[:, None]),
        "entropy": salun_entropy(prob),
        "m_entropy": salun_m_entropy(prob, lab),
        "prob": prob,
    }


def svc_scores(fin, fout, ftgt):
    """SalUn's SVC_fit_predict with target_train empty: returns the score and
    the predictions on the target set."""
    x = np.concatenate([np.asarray(fin).reshape(len(fin), -1), np.asarray(fout).reshape(len(fout), -1)])
    yy = np.concatenate([np.ones(len(fin)), np.zeros(len(fout))])
    clf = SVC(C=3, gamma="auto", kernel="rbf")
    clf.fit(x, yy)
    pred = clf.predict(np.asarray(ftgt).reshape(len(ftgt), -1))
    return float(1 - pred.mean()), pred.astype(np.uint8), int(clf.n_support_.sum())


# ---------------------------------------------------------------- loss attack


def loss_attack(z_forget, y_forget, z_test, y_test, seed):
    def ce(z, y):
        _, logp, _, _ = softmax_parts(z)
        return -logp[np.arange(len(z)), y]
    lf, lt = ce(z_forget, y_forget), ce(z_test, y_test)
    rng = np.random.RandomState(seed)
    k = min(len(lf), len(lt))
    sub_f = np.sort(rng.permutation(len(lf))[:k]) if len(lf) > k else np.arange(len(lf))
    sub_t = np.sort(rng.permutation(len(lt))[:k]) if len(lt) > k else np.arange(len(lt))
    x = np.concatenate([lt[sub_t], lf[sub_f]]).reshape(-1, 1)
    y = np.array([0] * k + [1] * k)
    cv = StratifiedShuffleSplit(n_splits=10, random_state=0)
    scores = cross_val_score(LogisticRegression(), x, y, cv=cv, scoring="accuracy")
    test_mask = np.zeros((10, len(y)), dtype=np.uint8)
    coef = np.zeros((10, 2))
    for s, (tr, te) in enumerate(cv.split(x, y)):
        test_mask[s, te] = 1
        lr = LogisticRegression().fit(x[tr], y[tr])
        coef[s] = lr.coef_[0, 0], lr.intercept_[0]
        assert abs(lr.score(x[te], y[te]) - scores[s]) < 1e-12
    return {"losses_forget": lf, "losses_test": lt, "sub_forget": sub_f, "sub_test": sub_t,
            "test_mask": test_mask, "coef": coef, "fold_scores": scores}


# ---------------------------------------------------------------- main


def main():
    t0 = time.time()
    fd = os.path.join(TD, "fashion")
    to_t = lambda a: torch.from_numpy(a.astype(np.float32) / 255.0).unsqueeze(1)
    xtr = to_t(mt.read_idx(f"{fd}/train-images-idx3-ubyte.gz"))
    ytr = mt.read_idx(f"{fd}/train-labels-idx1-ubyte.gz").astype(np.int64)
    xte = to_t(mt.read_idx(f"{fd}/t10k-images-idx3-ubyte.gz"))
    yte = mt.read_idx(f"{fd}/t10k-labels-idx1-ubyte.gz").astype(np.int64)
    forget = read_ids(os.path.join(TD, "demo", "forget_nonIID.txt"))
    retain = np.setdiff1d(np.arange(len(ytr)), forget)
    members = retain[:len(yte)]  # SalUn: Subset(retain, range(test_len)); all of retain if shorter
    groups = {"members": (xtr[members], ytr[members]), "nonmembers": (xte, yte), "forget": (xtr[forget], ytr[forget])}
    classes = 10

    out = {"generator": "testdata/mia/make_mia_ref.py", "torch": torch.__version__, "sklearn": sklearn.__version__,
           "numpy": np.__version__, "onnx": onnx.__version__, "data": "testdata/fashion",
           "forget": "testdata/demo/forget_nonIID.txt",
           "sizes": {"train": len(ytr), "test": len(yte), "forget": len(forget), "retain": len(retain),
                     "members": len(members), "nonmembers": len(yte)},
           "lr_seed": 0, "models": {}}
    arrays = {}
    for tag, fname in MODELS.items():
        model = load_model(os.path.join(TD, fname))
        ref = np.load(os.path.join(TD, "ref", f"{REFNAME[tag]}_logits.npz"))["logits"]
        got = logits_of(model, xte[:16])
        assert np.allclose(got, ref, rtol=1e-5, atol=1e-5), np.abs(got - ref).max()
        ztr, zte = logits_of(model, xtr), logits_of(model, xte)
        pred_tr, pred_te = ztr.argmax(1), zte.argmax(1)
        acc = {"train": float((pred_tr == ytr).mean()), "test": float((pred_te == yte).mean()),
               "forget": float((pred_tr[forget] == ytr[forget]).mean()),
               "retain": float((pred_tr[retain] == ytr[retain]).mean())}
        per_class = {}
        for split, pr, yy in [("train", pred_tr, ytr), ("test", pred_te, yte), ("forget", pred_tr[forget], ytr[forget]),
                              ("retain", pred_tr[retain], ytr[retain])]:
            per_class[split] = {"n": [int((yy == c).sum()) for c in range(classes)],
                                "correct": [int(((yy == c) & (pr == c)).sum()) for c in range(classes)]}
        z = {"members": ztr[members], "nonmembers": zte, "forget": ztr[forget]}
        y = {"members": ytr[members], "nonmembers": yte, "forget": ytr[forget]}
        feats = {g: features(z[g], y[g]) for g in z}
        scores, salun, nsv = {}, {}, {}
        for f in FEATURES:
            s, pred, k = svc_scores(feats["members"][f], feats["nonmembers"][f], feats["forget"][f])
            scores[f], nsv[f] = s, k
            arrays[f"{tag}_svcpred_{f}"] = pred
        sf = {g: salun_features(z[g], y[g]) for g in z}
        for f in ["correctness", "confidence", "entropy", "m_entropy", "prob"]:
            salun[f] = svc_scores(sf["members"][f], sf["nonmembers"][f], sf["forget"][f])[0]
        la = loss_attack(z["forget"], y["forget"], z["nonmembers"], y["nonmembers"], out["lr_seed"])
        scores["loss_lr"] = float(la["fold_scores"].mean())
        for g in z:
            arrays[f"{tag}_logits_{g}"] = z[g]
            for f in FEATURES:
                arrays[f"{tag}_feat_{f}_{g}"] = feats[g][f].astype(np.float32)
        for k in ["losses_forget", "losses_test"]:
            arrays[f"{tag}_lr_{k}"] = la[k]
        for k in ["sub_forget", "sub_test"]:
            arrays[f"{tag}_lr_{k}"] = la[k].astype(np.int64)
        arrays[f"{tag}_lr_test_mask"] = la["test_mask"]
        arrays[f"{tag}_lr_coef"] = la["coef"]
        out["models"][tag] = {"file": fname, "accuracy": acc, "per_class": per_class, "svc_mia": scores,
                              "salun_torch": salun, "n_support": nsv,
                              "loss_lr_folds": [float(v) for v in la["fold_scores"]]}
        print(tag, json.dumps({"accuracy": acc, "svc_mia": scores, "salun_torch": salun}), flush=True)
    for g in ["members", "nonmembers", "forget"]:
        arrays[f"labels_{g}"] = groups[g][1]
    arrays["ids_members"] = members.astype(np.int64)
    arrays["ids_forget"] = forget
    np.savez_compressed(os.path.join(HERE, "ref.npz"), **arrays)
    # No run time in the fixture: `make reference-check` regenerates it and
    # wants the same bytes.
    with open(os.path.join(HERE, "ref.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    print(f"done in {time.time() - t0:.0f}s")


if __name__ == "__main__":
    main()
