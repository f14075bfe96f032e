#!/usr/bin/env python3
"""Ground the verdict's tolerances in measurement (issue 63, item 3).

Reads only committed files (no training, no models) and prints, as
Markdown, every pair of models of one recipe that the repository measured
against each other, with Delta = reference - other in points of forget and
test accuracy, the set sizes n, the accuracy level p, the binomial two
standard errors 2*sqrt(p(1-p)/n), and, where the files hold per-example
agreement, the disagreement bound 2*sqrt(d/n). It then counts the pairs
outside the tolerance max(1 point, k*sqrt(p(1-p)/n)) for several k and
tabulates what the proposed constants imply.

    /usr/bin/python3 bench/tolerance_calibration.py            # Markdown to stdout
    /usr/bin/python3 bench/tolerance_calibration.py --json F   # also every row as JSON

Python standard library only; run from anywhere (paths are relative to the
repository root, the folder above this file's). docs/tolerance-calibration.md
quotes its output.
"""
import argparse
import glob
import gzip
import itertools
import json
import math
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The proposed constants (docs/tolerance-calibration.md says why).
FLOOR = 0.01        # one point: the claim where the set resolves it
K_FORGET = 2.0      # forget tolerance: K_FORGET binomial standard errors at n_forget
K_TEST = 2.5        # test tolerance: K_TEST binomial standard errors at n_test
CAP = 0.05          # a forget tolerance above 5 points: no verdict
KS = (1.5, 2.0, 2.5, 3.0, 3.5)


def rel(path):
    return os.path.relpath(path, ROOT)


def se(p, n):
    """One binomial standard error of an accuracy near p on n examples."""
    return math.sqrt(p * (1 - p) / n) if n > 0 and 0 < p < 1 else 0.0


def tol(p, n, k):
    return max(FLOOR, k * se(p, n))


def load(path):
    with open(path) as f:
        return json.load(f)


def read_jsonl(path):
    out = []
    with open(path) as f:
        for i, line in enumerate(f, 1):
            line = line.strip()
            if line:
                out.append((i, json.loads(line)))
    return out


def idx_count(path):
    """The item count in an IDX file's header (gzip or not)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        head = f.read(8)
    return struct.unpack(">I", head[4:8])[0]


def ids_count(path):
    with open(path) as f:
        return sum(1 for l in f if l.strip() and not l.lstrip().startswith("#"))


def check_integral(acc, n, what):
    """An accuracy measured on n examples is k/n; say so when it is not."""
    if n and abs(acc * n - round(acc * n)) > 1e-6:
        print(f"<!-- warning: {what}: accuracy {acc} is not a multiple of 1/{n} -->", file=sys.stderr)


ROWS = []
RETAIN_A = []  # Retrain (tool): (label, Δ retain) from the records' delta


def add(group, label, metric, n, p_ref, p_other, source, d=None, d_kind=None, pair_p=None):
    """One comparison. p is the reference's accuracy (pair_p: the pair's mean
    where no model of the pair is the reference)."""
    check_integral(p_ref, n, f"{label} {metric} (reference)")
    check_integral(p_other, n, f"{label} {metric} (other)")
    p = pair_p if pair_p is not None else p_ref
    ROWS.append({
        "group": group, "label": label, "metric": metric, "n": n,
        "p": p, "p_ref": p_ref, "p_other": p_other,
        "delta": p_ref - p_other, "se": se(p, n), "d": d, "d_kind": d_kind,
        "source": source,
    })


# --- A. Retrain (tool) rows: the tool's exact retraining against the PyTorch oracle.
def retrain_tool():
    # Test-split size of the ResNet-18 regime: a committed metrics.json's counts.
    m = load(os.path.join(ROOT, "regimes/resnet18/smoke/default-iid-seed0-30ep.metrics.json"))
    n_test = {"resnet18": m["counts"]["test"]}
    seen = set()
    for path in sorted(glob.glob(os.path.join(ROOT, "regimes/*/results*.jsonl"))):
        regime = path.split(os.sep)[-2]
        if regime == "folded-bn":
            continue  # not experiment records (run.py's own rows)
        recs = read_jsonl(path)
        oracles = [r for _, r in recs if r.get("kind") == "oracle"]
        for line, r in recs:
            if r.get("name") != "Retrain (tool)" or r["key"] in seen:
                continue
            seen.add(r["key"])
            # Its oracle: same forget set and seed, the oracle_seconds the run
            # was timed against, and accuracy = run + delta (Record.Delta).
            cands = [o for o in oracles if o["forget_set"] == r["forget_set"] and o["seed"] == r["seed"]
                     and o["oracle_seconds"] == r["oracle_seconds"]
                     and all(abs(o["accuracy"][k] - r["accuracy"][k] - r["delta"][k]) < 1e-9 for k in ("forget", "test"))]
            if len(cands) != 1:
                sys.exit(f"{rel(path)}:{line}: {len(cands)} oracles match the Retrain (tool) record {r['key']}")
            o = cands[0]
            nt = n_test.get(regime)
            if nt is None:
                sys.exit(f"no test-split size known for regime {regime}")
            label = f"{regime} {r['forget_set']} seed {r['seed']}"
            src = f"{rel(path)}:{line} (run {r['key']}, oracle {o['key']})"
            RETAIN_A.append((label, r["delta"]["retain"]))
            add("A", label, "forget", r["forget"], o["accuracy"]["forget"], r["accuracy"]["forget"], src)
            add("A", label, "test", nt, o["accuracy"]["test"], r["accuracy"]["test"], src)


# --- B. Fashion-MNIST oracle-noise: a second oracle (training seed 101, 102) against the grid's.
def oracle_noise():
    for path in sorted(glob.glob(os.path.join(ROOT, "regimes/fashion-mnist/oracle-noise/*.json"))):
        d = load(path)
        name = os.path.basename(path)[:-5]
        fs, _, s = name.rpartition("-seed0-train")
        for metric in ("forget", "test"):
            add("B", f"fashion-mnist {fs} seed 0, training seed {s}", metric, d["counts"][metric],
                d["oracle"]["accuracy"][metric], d["accuracy"][metric], rel(path),
                d=1 - d["agreement"][metric], d_kind="class")


# --- C. small-resnet score: 16 oracles (training seeds 1000-1015) of the non-IID seed-0 set.
def score_oracles():
    files = sorted(glob.glob(os.path.join(ROOT, "regimes/small-resnet/score/non-iid-seed0/*/score.json")))
    d = load(files[0])
    ors = [m for m in d["models"] if m["kind"] == "oracle"]
    shas = [m["model_sha256"] for m in ors]
    for f in files[1:]:  # every method's audit used the same 16 oracles
        other = [m["model_sha256"] for m in load(f)["models"] if m["kind"] == "oracle"]
        if other != shas:
            sys.exit(f"{rel(f)}: other oracles than {rel(files[0])}")
    k = len(ors)
    nf = d["settings"]["setup"]["forget"]
    nt = idx_count(os.path.join(ROOT, "testdata/fashion/t10k-labels-idx1-ubyte.gz"))
    if d["settings"]["setup"]["samples"]["test"] < nt:
        nt = d["settings"]["setup"]["samples"]["test"]
    # Mean disagreement in correctness between two distinct oracles, per
    # forget example: q = share of the K oracles right, P = 2 q K (1-q) K / (K (K-1)).
    q = [e["retrained_correct"] for e in d["forget"]]
    if len(q) != nf:
        sys.exit("per-example forget evidence does not cover the forget set")
    dpair = sum(2 * (x * k) * ((1 - x) * k) / (k * (k - 1)) for x in q) / nf
    # The grid's own oracle of that set and seed (seed 0): the reference.
    recs = read_jsonl(os.path.join(ROOT, "regimes/small-resnet/results.jsonl"))
    grid = [(i, r) for i, r in recs if r["kind"] == "oracle" and r["forget_set"] == "non-iid" and r["seed"] == 0]
    (gline, g), = grid
    if g["forget"] != nf:
        sys.exit("grid oracle's forget set is not the score's")
    for m in ors:
        for metric, n in (("forget", nf), ("test", nt)):
            add("C", f"small-resnet non-iid seed 0, training seed {m['seed']}", metric, n,
                g["accuracy"][metric], m["accuracy"][metric],
                f"{rel(files[0])} (models[{m['index']}]) vs regimes/small-resnet/results.jsonl:{gline}",
                d=dpair if metric == "forget" else None, d_kind="correct, ensemble mean" if metric == "forget" else None)
    pairs = {}
    for metric, n in (("forget", nf), ("test", nt)):
        acc = [m["accuracy"][metric] for m in ors] + [g["accuracy"][metric]]
        mean = sum(acc) / len(acc)
        var = sum((a - mean) ** 2 for a in acc) / (len(acc) - 1)
        deltas = [abs(a - b) for a, b in itertools.combinations(acc, 2)]
        zs = [abs(a - b) / se((a + b) / 2, n) for a, b in itertools.combinations(acc, 2)]
        pairs[metric] = {"n": n, "models": len(acc), "mean": mean, "sd": math.sqrt(var), "se": se(mean, n),
                         "pairs": len(deltas), "max": max(deltas), "zs": zs, "deltas": deltas}
    # Per-example prediction of the oracles' spread: sqrt(mean q(1-q) / n).
    pairs["forget"]["sd_examples"] = math.sqrt(sum(x * (1 - x) for x in q) / nf / nf)
    pairs["forget"]["d_pair"] = dpair
    return pairs, rel(files[0])


# --- D. The same oracle key retrained on another date: fashion-mnist vs fashion-mnist-default.
def same_key():
    a = {r["key"]: (i, r) for i, r in read_jsonl(os.path.join(ROOT, "regimes/fashion-mnist/results.jsonl")) if r["kind"] == "oracle"}
    b = {r["key"]: (i, r) for i, r in read_jsonl(os.path.join(ROOT, "regimes/fashion-mnist-default/results.jsonl")) if r["kind"] == "oracle"}
    nt = load(sorted(glob.glob(os.path.join(ROOT, "regimes/fashion-mnist/oracle-noise/*.json")))[0])["counts"]["test"]
    for key in a:
        if key not in b:
            continue
        (ia, ra), (ib, rb) = a[key], b[key]
        for metric, n in (("forget", ra["forget"]), ("test", nt)):
            add("D", f"fashion-mnist {ra['forget_set']} seed {ra['seed']}", metric, n,
                ra["accuracy"][metric], rb["accuracy"][metric],
                f"regimes/fashion-mnist/results.jsonl:{ia} vs regimes/fashion-mnist-default/results.jsonl:{ib} (key {key})")


# --- E. Whole-class oracles: the same ids (every class-2 example) on every seed.
def class_oracles():
    nt = idx_count(os.path.join(ROOT, "testdata/fashion/t10k-labels-idx1-ubyte.gz"))
    for regime in ("small-resnet", "small-vgg"):
        path = os.path.join(ROOT, f"regimes/{regime}/results.jsonl")
        ors = [(i, r) for i, r in read_jsonl(path) if r["kind"] == "oracle" and r["forget_set"] == "class"]
        for (ia, ra), (ib, rb) in itertools.combinations(ors, 2):
            pa, pb = ra["accuracy"]["test"], rb["accuracy"]["test"]
            add("E", f"{regime} class, seeds {ra['seed']}/{rb['seed']}", "test", nt, pa, pb,
                f"{rel(path)}:{ia},{ib}", pair_p=(pa + pb) / 2)


# --- F. folded-bn: PyTorch oracles of the demo's non-IID set, seeds 0-2.
def folded_bn():
    path = os.path.join(ROOT, "regimes/folded-bn/results.jsonl")
    nf = ids_count(os.path.join(ROOT, "testdata/demo/forget_nonIID.txt"))
    nt = idx_count(os.path.join(ROOT, "testdata/fashion/t10k-labels-idx1-ubyte.gz"))
    by_seed = {}
    for i, r in read_jsonl(path):
        by_seed.setdefault(r["seed"], (i, r["oracle"]))
    for (sa, (ia, a)), (sb, (ib, b)) in itertools.combinations(sorted(by_seed.items()), 2):
        for metric, n in (("forget", nf), ("test", nt)):
            add("F", f"folded-bn non-iid, seeds {sa}/{sb}", metric, n, a[metric], b[metric],
                f"{rel(path)}:{ia},{ib}", pair_p=(a[metric] + b[metric]) / 2)


# --- G. ResNet-18 originals: the same 5,000 images and recipe, seeds 0-3 (test only).
def resnet18_originals():
    m = load(os.path.join(ROOT, "regimes/resnet18/smoke/default-iid-seed0-30ep.metrics.json"))
    nt = m["counts"]["test"]
    side = []
    for path in sorted(glob.glob(os.path.join(ROOT, "regimes/resnet18/models/original-seed*.json"))):
        s = load(path)
        side.append((s["seed"], s["final"]["test_accuracy"], rel(path), s.get("trained_on", s["machine"])))
    for (sa, pa, fa, ma), (sb, pb, fb, mb) in itertools.combinations(side, 2):
        add("G", f"resnet18 originals, seeds {sa}/{sb}" + ("" if ma == mb else " (two CPUs)"), "test", nt, pa, pb,
            f"{fa}, {fb}", pair_p=(pa + pb) / 2)


GROUPS = {
    "A": "`Retrain (tool)` (the tool's 30-epoch retraining, its own initialisation and data order) against the PyTorch oracle, ResNet-18 regime",
    "B": "a second oracle (training seed 101 or 102) against the grid's oracle, same data, forget set and recipe (fashion-mnist oracle-noise)",
    "C": "16 oracles of the score audit (training seeds 1000-1015) against the grid's seed-0 oracle of the same forget set and recipe (small-resnet)",
    "D": "the same oracle key (recipe, seed, forget ids) trained twice, by the benchmark grid and by the default's grid (full Fashion-MNIST)",
    "E": "whole-class oracles (every class-2 example: the same ids on every seed) of two seeds, test only",
    "F": "PyTorch oracles of the demo's non-IID set, two seeds (folded-bn)",
    "G": "PyTorch ResNet-18 originals (same 5,000 images and recipe) of two seeds, test only",
}


def pts(x, sign=False):
    return f"{100 * x:+.2f}" if sign else f"{100 * x:.2f}"


def row_table(group):
    rows = [r for r in ROWS if r["group"] == group]
    out = ["| pair | metric | n | p (%) | Δ (pts) | 2·SE (pts) | \\|Δ\\|/SE | 2·√(d/n) (pts) | outside max(1, 2·SE)? | outside the proposal? | source |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        z = abs(r["delta"]) / r["se"] if r["se"] else float("nan")
        db = f"{pts(2 * math.sqrt(r['d'] / r['n']))} (d = {100 * r['d']:.2f} %, {r['d_kind']})" if r["d"] is not None else "—"
        out_k2 = "**yes**" if abs(r["delta"]) > tol(r["p"], r["n"], 2.0) + 1e-12 else "no"
        kp = K_FORGET if r["metric"] == "forget" else K_TEST
        out_p = ("**yes**" if abs(r["delta"]) > tol(r["p"], r["n"], kp) + 1e-12 else "no") + f" ({pts(tol(r['p'], r['n'], kp))})"
        zs = f"{z:.2f}" if r["se"] else "— (p = 0)"
        out.append(f"| {r['label']} | {r['metric']} | {r['n']:,} | {pts(r['p'])} | {pts(r['delta'], True)} | "
                   f"{pts(2 * r['se'])} | {zs} | {db} | {out_k2} | {out_p} | {r['source']} |")
    return "\n".join(out)


def outside(rows, k):
    return [r for r in rows if abs(r["delta"]) > tol(r["p"], r["n"], k) + 1e-12]


def count_table():
    sets = [("A: Retrain (tool)", lambda r: r["group"] == "A"),
            ("B–G: oracle pairs of one recipe", lambda r: r["group"] != "A"),
            ("all", lambda r: True)]
    out = ["| pairs | metric | pairs | outside 1 point | " + " | ".join(f"outside max(1, {k:g}·SE)" for k in KS) + " |",
           "|---|---|---|---|" + "---|" * len(KS)]
    for name, sel in sets:
        for metric in ("forget", "test"):
            rows = [r for r in ROWS if sel(r) and r["metric"] == metric]
            if not rows:
                continue
            one = [r for r in rows if abs(r["delta"]) > FLOOR + 1e-12]
            cells = []
            for k in KS:
                o = outside(rows, k)
                cells.append(f"{len(o)}" + (" (" + ", ".join(f"{r['group']} {r['label']}" for r in o) + ")" if o and len(o) <= 3 else ""))
            out.append(f"| {name} | {metric} | {len(rows)} | {len(one)} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def k_needed():
    out = ["| pairs | metric | largest \\|Δ\\|/SE among pairs more than a point apart (the k that takes them all in) |", "|---|---|---|"]
    for name, sel in (("A: Retrain (tool)", lambda r: r["group"] == "A"), ("B–G", lambda r: r["group"] != "A")):
        for metric in ("forget", "test"):
            rows = [r for r in ROWS if sel(r) and r["metric"] == metric and abs(r["delta"]) > FLOOR + 1e-12 and r["se"]]
            if rows:
                top = max(rows, key=lambda r: abs(r["delta"]) / r["se"])
                out.append(f"| {name} | {metric} | {abs(top['delta']) / top['se']:.2f} ({top['group']} {top['label']}: Δ {pts(top['delta'], True)} at n {top['n']:,}, p {pts(top['p'])} %) |")
            else:
                out.append(f"| {name} | {metric} | none more than a point apart |")
    return "\n".join(out)


def spread_table():
    """The spread of Δ in SE units: its root mean square over the pairs (the
    SD of Δ/SE if its mean is 0), and the share of a normal Δ of that SD
    inside k·SE."""
    out = ["| pairs | metric | pairs (p in (0, 1)) | mean Δ/SE | RMS of Δ/SE | a normal Δ of that RMS inside 2·SE | inside 2.5·SE | inside 3·SE |",
           "|---|---|---|---|---|---|---|---|"]
    sets = (("A: Retrain (tool)", lambda r: r["group"] == "A"), ("B–G: oracle pairs of one recipe", lambda r: r["group"] != "A"))
    for name, sel in sets:
        for metric in ("forget", "test"):
            zs = [r["delta"] / r["se"] for r in ROWS if sel(r) and r["metric"] == metric and r["se"]]
            rms = math.sqrt(sum(z * z for z in zs) / len(zs))
            cov = [math.erf(k / rms / math.sqrt(2)) for k in (2.0, 2.5, 3.0)]
            out.append(f"| {name} | {metric} | {len(zs)} | {sum(zs) / len(zs):+.2f} | {rms:.2f} | "
                       + " | ".join(f"{100 * c:.1f} %" for c in cov) + " |")
    return "\n".join(out)


def implied_table(kf, kt):
    ns = (40, 100, 300, 500, 600, 1000, 3000, 6000)
    ps = (0.5, 0.8, 0.9, 0.95)
    out = ["Forget tolerance max(1, %g·√(p(1−p)/n_f)), points; — : above the %g-point cap, no verdict:\n" % (kf, 100 * CAP),
           "| n_f | " + " | ".join(f"p = {p:g}" for p in ps) + " |", "|---|" + "---|" * len(ps)]
    for n in ns:
        cells = []
        for p in ps:
            t = tol(p, n, kf)
            cells.append(f"{100 * t:.2f}" if t <= CAP + 1e-12 else f"— ({100 * t:.1f})")
        out.append(f"| {n:,} | " + " | ".join(cells) + " |")
    out.append("\nTest tolerance max(1, %g·√(p(1−p)/n_t)), points:\n" % kt)
    pt = (0.8, 0.9)
    out += ["| n_t | " + " | ".join(f"p = {p:g}" for p in pt) + " |", "|---|" + "---|" * len(pt)]
    for n in (1000, 2000, 10000):
        out.append(f"| {n:,} | " + " | ".join(f"{100 * tol(p, n, kt):.2f}" for p in pt) + " |")
    return "\n".join(out)


def cap_table():
    out = []
    out.append("Where the cap and the floor fall (forget set size n_f):\n")
    out += ["| p | k | no verdict below n_f (tolerance > 5 points) | tolerance is the 1-point floor from n_f |", "|---|---|---|---|"]
    for p in (0.5, 0.8, 0.9, 0.95):
        for k in (2.0, 2.5, 3.0):
            cap_n = k * k * p * (1 - p) / CAP ** 2
            floor_n = k * k * p * (1 - p) / FLOOR ** 2
            out.append(f"| {p:g} | {k:g} | {math.ceil(cap_n - 1e-9):,} | {math.ceil(floor_n - 1e-9):,} |")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="also write every row to this file")
    a = ap.parse_args()
    retrain_tool()
    oracle_noise()
    score, score_file = score_oracles()
    same_key()
    class_oracles()
    folded_bn()
    resnet18_originals()

    print("<!-- generated by bench/tolerance_calibration.py -->")
    print("Δ = reference − other (points); p is the reference's accuracy (the pair's mean where neither is the reference);"
          " SE = √(p(1−p)/n); d is the disagreement rate between the two models on that split;"
          f" the proposal is max(1 point, {K_FORGET:g}·SE) on forget and max(1 point, {K_TEST:g}·SE) on test (its tolerance in brackets).\n")
    for g, title in GROUPS.items():
        print(f"#### {g}. {title}\n")
        print(row_table(g) + "\n")
    print("#### The 17 oracles of the small-resnet score audit (16 + the grid's), every pair\n")
    print("| metric | n | oracles | mean (%) | SD across oracles (pts) | SE at the mean (pts) | SD predicted from per-example q (pts) | pairs | largest \\|Δ\\| (pts) | pairs with \\|Δ\\| > max(1, 2·SE) | > max(1, 2.5·SE) | > max(1, 3·SE) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for metric in ("forget", "test"):
        s = score[metric]
        n_out = {k: sum(1 for dlt, z in zip(s["deltas"], s["zs"]) if dlt > FLOOR + 1e-12 and z > k) for k in (2.0, 2.5, 3.0)}
        sdq = pts(s["sd_examples"]) if "sd_examples" in s else "—"
        print(f"| {metric} | {s['n']:,} | {s['models']} | {pts(s['mean'])} | {pts(s['sd'])} | {pts(s['se'])} | {sdq} | {s['pairs']} | {pts(s['max'])} | {n_out[2.0]} | {n_out[2.5]} | {n_out[3.0]} |")
    f = score["forget"]
    print(f"\nMean disagreement in correctness between two of the 16 oracles on the forget set: d = {100 * f['d_pair']:.2f} %"
          f" (p(1−p) = {100 * f['mean'] * (1 - f['mean']):.2f} %, ratio {f['d_pair'] / (f['mean'] * (1 - f['mean'])):.2f});"
          f" from the per-example `retrained_correct` of {score_file}.\n")
    print("#### Disagreement against p(1−p)\n")
    print("| pair | metric | d (%) | p(1−p) (%) | d ÷ p(1−p) |")
    print("|---|---|---|---|---|")
    for r in ROWS:
        if r["d"] is not None and r["group"] == "B":
            print(f"| {r['label']} | {r['metric']} | {100 * r['d']:.2f} | {100 * r['p'] * (1 - r['p']):.2f} | {r['d'] / (r['p'] * (1 - r['p'])):.2f} |")
    print(f"| small-resnet score, 16 oracles (pairs) | forget | {100 * f['d_pair']:.2f} | {100 * f['mean'] * (1 - f['mean']):.2f} | {f['d_pair'] / (f['mean'] * (1 - f['mean'])):.2f} |")
    print("\n#### Pairs outside the tolerance, by k\n")
    print(count_table() + "\n")
    print(k_needed() + "\n")
    print("#### A's Δ by sign\n")
    for metric in ("forget", "test"):
        ds = [r["delta"] for r in ROWS if r["group"] == "A" and r["metric"] == metric]
        print(f"- {metric}: {sum(1 for x in ds if x > 0)} of {len(ds)} positive (oracle above the tool's retraining),"
              f" {sum(1 for x in ds if x < 0)} negative; mean {pts(sum(ds) / len(ds), True)} points")
    ds = [x for _, x in RETAIN_A]
    print(f"- retain (not a verdict metric; from the records' delta): {sum(1 for x in ds if x > 0)} of {len(ds)} positive,"
          f" {100 * min(ds):+.2f} to {100 * max(ds):+.2f} points, mean {100 * sum(ds) / len(ds):+.2f}")
    print("\n#### The spread of Δ in standard errors\n")
    print(spread_table())
    print(f"\n#### What the proposed constants imply (k_f = {K_FORGET:g}, k_t = {K_TEST:g})\n")
    print(implied_table(K_FORGET, K_TEST))
    print("\n#### The same under k_f = k_t = 2.5\n")
    print(implied_table(2.5, 2.5))
    print()
    print(cap_table())
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(ROWS, fh, indent=1)


if __name__ == "__main__":
    main()
