#!/usr/bin/python3
"""Generate parity fixtures for package eval/svc.

Run with Debian's python3 (scikit-learn 1.2, numpy):

    /usr/bin/python3 testdata/svc/make_svc_fixtures.py [outdir]

Every fixture is a binary C-SVC problem fitted with
SVC(C=3, gamma='auto', kernel='rbf'), exactly as SalUn's SVC_MIA does.
Features are generated in float64, rounded to float32 and stored as float32;
both sklearn (here) and the Go test see the float32 values widened to float64.

Files written to outdir (default: the directory of this script):

  fixtures.json      manifest: one entry per fixture (name, n_train, n_test, d,
                     file, sklearn n_SV, intercept, fit seconds, ...)
  <name>.bin.gz      gzip of little-endian raw arrays, in order:
                       x_train  float32 [n_train*d]  (row-major)
                       y_train  uint8   [n_train]    (0/1)
                       x_test   float32 [n_test*d]
                       pred     uint8   [n_test]     sklearn predict(x_test)
                       dec      float64 [n_test]     sklearn decision_function(x_test)

With --time-only the script refits sklearn on existing fixtures and prints
one JSON line per fixture with the best fit time of SVC_BENCH_REPEATS fits,
for fixtures whose name contains SVC_BENCH_FILTER (used by
bench/svc_vs_sklearn.sh).
"""
import gzip
import json
import os
import sys
import time

import numpy as np
from sklearn.svm import SVC


def softmax(z):
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def gauss_1d(rng, n, sep):
    """Two 1-D Gaussians at -sep/2 and +sep/2; labels balanced."""
    y = (np.arange(n) % 2).astype(np.uint8)
    rng.shuffle(y)
    x = rng.normal(size=(n, 1)) + (y[:, None] - 0.5) * sep
    return x, y


def gauss_10d(rng, n, sep):
    y = (np.arange(n) % 2).astype(np.uint8)
    rng.shuffle(y)
    direction = np.ones(10) / np.sqrt(10.0)
    x = rng.normal(size=(n, 10)) + (y[:, None] - 0.5) * sep * direction
    return x, y


def random_labels(rng, n, d):
    x = rng.uniform(size=(n, d))
    y = rng.integers(0, 2, size=n).astype(np.uint8)
    return x, y


def mia_layout(members, nonmembers):
    """SalUn's SVC_MIA layout: members (label 1) first, then non-members (0)."""
    x = np.concatenate([members, nonmembers]).reshape(len(members) + len(nonmembers), -1)
    y = np.concatenate([np.ones(len(members)), np.zeros(len(nonmembers))]).astype(np.uint8)
    return x, y


def correctness(rng, n, acc_member, acc_non, n_test):
    """1-D 0/1 'correctness' feature: many exact duplicates (SalUn main table)."""
    mem = (rng.uniform(size=n) < acc_member).astype(np.float64)
    non = (rng.uniform(size=n) < acc_non).astype(np.float64)
    x, y = mia_layout(mem, non)
    # targets: a forget set that looks like a mix
    xt = (rng.uniform(size=n_test) < 0.97).astype(np.float64)[:, None]
    return x, y, xt


def confidence_like(rng, n, n_test):
    """1-D softmax-confidence feature; members are more confident.
    Many member values saturate at exactly 1.0 in float32 (duplicates)."""
    def conf(k, scale):
        logits = rng.normal(size=(k, 10))
        true = rng.integers(0, 10, size=k)
        logits[np.arange(k), true] += rng.exponential(scale, size=k)
        p = softmax(logits).astype(np.float32).astype(np.float64)
        return p[np.arange(k), true]
    mem = conf(n, 12.0)
    non = conf(n, 6.0)
    x, y = mia_layout(mem, non)
    xt = conf(n_test, 9.0)[:, None]
    return x, y, xt


def prob_vectors(rng, n, n_test):
    """10-D probability vectors (SalUn's 'prob' feature)."""
    def probs(k, scale):
        logits = rng.normal(size=(k, 10))
        true = rng.integers(0, 10, size=k)
        logits[np.arange(k), true] += rng.exponential(scale, size=k)
        return softmax(logits)
    x, y = mia_layout(probs(n, 5.0), probs(n, 3.0))
    xt = probs(n_test, 4.0)
    return x, y, xt


def entropy_like(rng, n, n_test):
    """1-D entropy of a probability vector (members lower entropy)."""
    def ent(k, scale):
        logits = rng.normal(size=(k, 10))
        true = rng.integers(0, 10, size=k)
        logits[np.arange(k), true] += rng.exponential(scale, size=k)
        p = softmax(logits)
        return -(p * np.log(np.clip(p, 1e-30, None))).sum(axis=1)
    x, y = mia_layout(ent(n, 6.0), ent(n, 3.0))
    xt = ent(n_test, 4.5)[:, None]
    return x, y, xt


def build(rng):
    """Returns a list of (name, description, x_train, y_train, x_test)."""
    out = []

    def add(name, desc, x, y, xt):
        out.append((name, desc, np.asarray(x, np.float64), np.asarray(y, np.uint8),
                    np.asarray(xt, np.float64)))

    x, y = gauss_1d(rng, 200, 6.0)
    xt, _ = gauss_1d(rng, 1000, 6.0)
    add("sep1d_200", "1-D separable Gaussians", x, y, xt)

    x, y = gauss_1d(rng, 2000, 1.0)
    xt, _ = gauss_1d(rng, 2000, 1.0)
    add("overlap1d_2000", "1-D overlapping Gaussians", x, y, xt)

    x, y = random_labels(rng, 1000, 1)
    xt, _ = random_labels(rng, 2000, 1)
    add("random1d_1000", "1-D uniform features, random labels", x, y, xt)

    x, y = gauss_10d(rng, 500, 8.0)
    xt, _ = gauss_10d(rng, 1000, 8.0)
    add("sep10d_500", "10-D separable Gaussians", x, y, xt)

    x, y = gauss_10d(rng, 5000, 1.5)
    xt, _ = gauss_10d(rng, 2000, 1.5)
    add("overlap10d_5000", "10-D overlapping Gaussians", x, y, xt)

    x, y = random_labels(rng, 1000, 10)
    xt, _ = random_labels(rng, 2000, 10)
    add("random10d_1000", "10-D uniform features, random labels", x, y, xt)

    # Degenerate: duplicated points with conflicting labels, constant features.
    base, _ = gauss_1d(rng, 50, 2.0)
    x = np.repeat(base, 6, axis=0)
    y = np.concatenate([np.zeros(150), np.ones(150)]).astype(np.uint8)
    rng.shuffle(y)
    xt = np.concatenate([base, rng.normal(size=(200, 1))])
    add("dup1d_300", "1-D, 50 distinct points each repeated 6x, shuffled labels", x, y, xt)

    x, y = random_labels(rng, 300, 3)
    x[:] = 0.25
    y = np.concatenate([np.zeros(120), np.ones(180)]).astype(np.uint8)
    xt = rng.uniform(size=(200, 3))
    add("const3d_300", "3-D, all features constant, 120 vs 180 labels", x, y, xt)

    # SalUn-style MIA features (members first, label 1; non-members 0).
    x, y, xt = correctness(rng, 2000, 0.99, 0.90, 2000)
    add("correct1d_4000", "1-D 0/1 correctness (MIA), 2000+2000", x, y, xt)

    x, y, xt = correctness(rng, 10000, 0.995, 0.94, 5000)
    add("correct1d_20000", "1-D 0/1 correctness (MIA), 10000+10000", x, y, xt)

    x, y, xt = confidence_like(rng, 10000, 5000)
    add("conf1d_20000", "1-D confidence (MIA), 10000+10000", x, y, xt)

    x, y, xt = entropy_like(rng, 5000, 3000)
    add("entropy1d_10000", "1-D entropy (MIA), 5000+5000", x, y, xt)

    x, y, xt = prob_vectors(rng, 10000, 5000)
    add("prob10d_20000", "10-D probability vectors (MIA), 10000+10000", x, y, xt)

    x, y = gauss_10d(rng, 20000, 1.0)
    xt, _ = gauss_10d(rng, 5000, 1.0)
    add("overlap10d_20000", "10-D overlapping Gaussians", x, y, xt)
    return out


def as_f32(a):
    return np.ascontiguousarray(a, dtype=np.float32)


def fit_sklearn(x, y):
    clf = SVC(C=3, gamma="auto", kernel="rbf")
    t0 = time.perf_counter()
    clf.fit(x, y)
    return clf, time.perf_counter() - t0


def read_fixture(path, n, m, d):
    with gzip.open(path, "rb") as f:
        buf = f.read()
    off = 0

    def take(dtype, count):
        nonlocal off
        a = np.frombuffer(buf, dtype=dtype, count=count, offset=off)
        off += a.nbytes
        return a
    x = take("<f4", n * d).reshape(n, d).astype(np.float64)
    y = take("u1", n)
    xt = take("<f4", m * d).reshape(m, d).astype(np.float64)
    return x, y, xt


def time_only(outdir, repeats):
    with open(os.path.join(outdir, "fixtures.json")) as f:
        manifest = json.load(f)
    filt = os.environ.get("SVC_BENCH_FILTER", "")
    for fx in manifest["fixtures"]:
        if filt and filt not in fx["name"]:
            continue
        x, y, _ = read_fixture(os.path.join(outdir, fx["file"]), fx["n_train"], fx["n_test"], fx["d"])
        best = None
        for _ in range(repeats):
            _, t = fit_sklearn(x, y)
            best = t if best is None else min(best, t)
        print(json.dumps({"name": fx["name"], "n": fx["n_train"], "d": fx["d"], "fit_seconds": best}),
              flush=True)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    outdir = args[0] if args else os.path.dirname(os.path.abspath(__file__))
    if "--time-only" in sys.argv:
        repeats = int(os.environ.get("SVC_BENCH_REPEATS", "1"))
        time_only(outdir, repeats)
        return
    rng = np.random.default_rng(20240521)
    entries = []
    for name, desc, x, y, xt in build(rng):
        x32, xt32 = as_f32(x), as_f32(xt)
        x64, xt64 = x32.astype(np.float64), xt32.astype(np.float64)
        clf, secs = fit_sklearn(x64, y)
        pred = clf.predict(xt64).astype(np.uint8)
        dec = clf.decision_function(xt64).astype("<f8")
        fname = name + ".bin.gz"
        with gzip.GzipFile(os.path.join(outdir, fname), "wb", compresslevel=9, mtime=0) as f:
            f.write(x32.astype("<f4").tobytes())
            f.write(y.astype("u1").tobytes())
            f.write(xt32.astype("<f4").tobytes())
            f.write(pred.tobytes())
            f.write(dec.tobytes())
        e = {
            "name": name,
            "description": desc,
            "file": fname,
            "n_train": int(x.shape[0]),
            "n_test": int(xt.shape[0]),
            "d": int(x.shape[1]),
            "n_sv": int(clf.support_.shape[0]),
            "n_support": [int(v) for v in clf.n_support_],
            "intercept": float(clf.intercept_[0]),
            "fit_seconds": secs,
            "train_pred_mean": float(clf.predict(x64).mean()),
        }
        entries.append(e)
        print(json.dumps(e), flush=True)
    manifest = {
        "generator": "testdata/svc/make_svc_fixtures.py",
        "sklearn": __import__("sklearn").__version__,
        "numpy": np.__version__,
        "estimator": "SVC(C=3, gamma='auto', kernel='rbf')",
        "fixtures": entries,
    }
    with open(os.path.join(outdir, "fixtures.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
