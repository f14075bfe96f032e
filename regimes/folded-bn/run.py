#!/usr/bin/python3
"""What folding BatchNormalization into the convolutions costs the default
run, and whether giving a folded model trainable normalization back helps
(issue 29).

Per seed, on the bundled Fashion-MNIST subset (testdata/fashion: 4,000 train,
1,000 test, pixel/255) with the demo's non-IID forget set
(testdata/demo/forget_nonIID.txt, 400 ids):

  1. trains a CNN with BatchNormalization (141k parameters: conv-BN-ReLU
     32, 32, pool, 64, 64, pool, 128, global average pool, linear 10) in
     PyTorch with a realistic recipe (padded random crop and horizontal flip,
     SGD momentum 0.9, weight decay 5e-4, cosine, 12 epochs), and the oracle:
     the same recipe and seed without the forget set;
  2. exports the original three ways:
       preserve.onnx  TrainingMode.PRESERVE, do_constant_folding=False: BN kept
                      (the README's recipe);
       folded.onnx    torch.onnx.export(model.eval(), ...) with dynamic_axes:
                      BN folded into the Conv weights and biases;
       restored.onnx  the folded convolutions, each followed by a new
                      BatchNormalization initialised to the identity in eval
                      mode (running mean/variance = the folded convolution's
                      output statistics on the training split, weight =
                      sqrt(var + eps), bias = mean), exported like
                      preserve.onnx. Folding that layer back into the
                      convolution on write is exact algebra, so this file
                      measures what "trainable normalization back" would do
                      without the tool having to rewrite the graph;
  3. runs the tool's default (`unlearn --model M --forget F --oracle O`) on
     each and records its metrics.json: "preserve", "restored" and "folded"
     with bin/unlearn, which puts trainable BatchNormalization back into a
     folded model for the run (unlearn.Prepared.RestoreFoldedBN), and
     "folded-kept": folded.onnx with a build of the tool from before that
     restoration (commit 403b50e, which trains the folded convolutions as
     they are), given as --kept-bin (built by
       git worktree add --detach /tmp/keep 403b50e &&
       (cd /tmp/keep && go build -o $PWD/out/folded-bn/unlearn-keep-folded ./cmd/unlearn)).

Writes results.jsonl (one line per seed and export) and prints a table;
RESULTS.md in this folder is written from it by hand with the CPU named.

    /usr/bin/python3 regimes/folded-bn/run.py [--seeds 0 1 2] [--epochs 12]
    /usr/bin/python3 regimes/folded-bn/run.py --report   # the table

Needs python3-torch and python3-onnx (Debian) and bin/unlearn (make build).
Models and logs go to out/folded-bn/ (not committed); a seed whose three
results exist in results.jsonl is skipped, so the script resumes.
"""
import argparse
import copy
import gzip
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.join(ROOT, "regimes", "folded-bn")
OUT = os.path.join(ROOT, "out", "folded-bn")
DATA = os.path.join(ROOT, "testdata", "fashion")
FORGET = os.path.join(ROOT, "testdata", "demo", "forget_nonIID.txt")
EXPORTS = ("preserve", "folded", "folded-kept", "restored")


def read_idx(path):
    with gzip.open(path, "rb") as f:
        raw = f.read()
    nd = raw[3]
    dims = struct.unpack(">" + "I" * nd, raw[4:4 + 4 * nd])
    return np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * nd).reshape(dims)


def load(split):
    x = read_idx(os.path.join(DATA, split + "-images-idx3-ubyte.gz"))
    y = read_idx(os.path.join(DATA, split + "-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(x.astype(np.float32) / np.float32(255)).unsqueeze(1)
    return x, torch.from_numpy(y.astype(np.int64))


def block(cin, cout):
    return [nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU()]


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(*block(1, 32), *block(32, 32), nn.MaxPool2d(2),
                                      *block(32, 64), *block(64, 64), nn.MaxPool2d(2),
                                      *block(64, 128))
        self.fc = nn.Linear(128, 10)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def augment(x, g):
    # Padded random crop (pad 2) and horizontal flip, as --augment pad=2,flip.
    n = x.shape[0]
    p = F.pad(x, (2, 2, 2, 2))
    dx = torch.randint(0, 5, (n,), generator=g)
    dy = torch.randint(0, 5, (n,), generator=g)
    flip = torch.rand(n, generator=g) < 0.5
    out = torch.empty_like(x)
    for i in range(n):
        c = p[i, :, dy[i]:dy[i] + 28, dx[i]:dx[i] + 28]
        out[i] = torch.flip(c, [2]) if flip[i] else c
    return out


def train(x, y, seed, epochs):
    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = CNN()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=5e-4)
    steps = epochs * ((len(x) + 127) // 128)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    model.train()
    for _ in range(epochs):
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), 128):
            b = perm[i:i + 128]
            opt.zero_grad()
            F.cross_entropy(model(augment(x[b], g)), y[b]).backward()
            opt.step()
            sched.step()
    return model.eval()


def accuracy(model, x, y):
    with torch.no_grad():
        return float((model(x).argmax(1) == y).float().mean())


class Restored(nn.Module):
    """The folded model with an identity BatchNormalization after each
    convolution."""

    def __init__(self, model, x):
        super().__init__()
        layers = []
        h = x
        mods = list(model.features)
        i = 0
        while i < len(mods):
            m = mods[i]
            if isinstance(m, nn.Conv2d):
                bn = mods[i + 1]
                s = bn.weight / torch.sqrt(bn.running_var + bn.eps)
                conv = nn.Conv2d(m.in_channels, m.out_channels, 3, padding=1, bias=True)
                with torch.no_grad():
                    conv.weight.copy_(m.weight * s[:, None, None, None])
                    conv.bias.copy_(bn.bias - bn.running_mean * s)
                    out = conv(h)
                    mean = out.mean((0, 2, 3))
                    var = out.var((0, 2, 3), unbiased=False)
                nbn = nn.BatchNorm2d(m.out_channels)
                with torch.no_grad():
                    nbn.running_mean.copy_(mean)
                    nbn.running_var.copy_(var)
                    nbn.weight.copy_(torch.sqrt(var + nbn.eps))
                    nbn.bias.copy_(mean)
                layers += [conv, nbn]
                with torch.no_grad():
                    h = nbn.eval()(out)
                i += 2
            else:
                layers.append(m)
                with torch.no_grad():
                    h = m(h)
                i += 1
        self.features = nn.Sequential(*layers)
        self.fc = copy.deepcopy(model.fc)

    def forward(self, x):
        x = self.features(x)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def export(model, path, x, preserve):
    dyn = {"input": {0: "batch"}, "logits": {0: "batch"}}
    kw = dict(input_names=["input"], output_names=["logits"], dynamic_axes=dyn, opset_version=17)
    if preserve:
        kw.update(training=torch.onnx.TrainingMode.PRESERVE, do_constant_folding=False)
    torch.onnx.export(copy.deepcopy(model).eval(), x[:2], path, **kw)


def run_tool(binary, model, oracle, out, log):
    cmd = [binary, "--model", model, "--forget", FORGET, "--data", DATA,
           "--oracle", oracle, "--out", out, "--threads", "2"]
    t0 = time.time()
    env = dict(os.environ)
    env.setdefault("ONNXRUNTIME_LIB", os.path.join(ROOT, ".ort", "libonnxruntime.so.1"))
    with open(log, "w") as f:
        rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env).returncode
    return rc, time.time() - t0


def report(res_path):
    """Prints RESULTS.md's table from results.jsonl: per export, the mean
    over seeds of forget and test accuracy, the gaps to the oracle, the
    input's test accuracy and the unlearning seconds."""
    rows = [json.loads(l) for l in open(res_path)]
    seeds = sorted({r["seed"] for r in rows})
    print(f"Seeds {seeds}; percentages; Δ = oracle − model; seconds of the tool's unlearning (localize excluded).\n")
    print("| export | runs | forget acc | Δ forget | test acc | Δ test | input test | auto stop | seconds |")
    print("|---|---|---|---|---|---|---|---|---|")
    for e in ("preserve", "restored", "folded", "folded-kept", "folded-mask-exact"):
        rs = [r for r in rows if r["export"] == e and r["rc"] == 0]
        if not rs:
            continue
        m = lambda f: sum(f(r) for r in rs) / len(rs)
        stops = ", ".join(f"{r['auto']['reason']} {r['auto']['epoch']}" for r in rs if r.get("auto"))
        print(f"| {e} | {len(rs)} | {100*m(lambda r: r['after']['forget']):.2f} | {100*m(lambda r: r['oracle']['forget']-r['after']['forget']):+.2f} | "
              f"{100*m(lambda r: r['after']['test']):.2f} | {100*m(lambda r: r['oracle']['test']-r['after']['test']):+.2f} | "
              f"{100*m(lambda r: r['before']['test']):.2f} | {stops} | {m(lambda r: r.get('unlearn_s') or 0):.0f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--report", action="store_true", help="print the table of results.jsonl and exit")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--kept-bin", default=os.path.join(OUT, "unlearn-keep-folded"))
    a = ap.parse_args()
    if a.report:
        return report(os.path.join(HERE, "results.jsonl"))
    torch.set_num_threads(2)
    os.makedirs(OUT, exist_ok=True)
    res_path = os.path.join(HERE, "results.jsonl")
    done, rows = set(), []
    if os.path.exists(res_path):
        for line in open(res_path):
            r = json.loads(line)
            rows.append(r)
            done.add((r["seed"], r["export"]))
    xtr, ytr = load("train")
    xte, yte = load("t10k")
    forget = [int(l) for l in open(FORGET) if l.strip() and not l.startswith("#")]
    keep = torch.ones(len(xtr), dtype=torch.bool)
    keep[forget] = False
    for seed in a.seeds:
        if all((seed, e) in done for e in EXPORTS):
            continue
        d = os.path.join(OUT, f"seed{seed}")
        os.makedirs(d, exist_ok=True)
        files = [os.path.join(d, f + ".onnx") for f in ("oracle", "preserve", "folded", "restored")]
        if all(os.path.exists(f) for f in files):
            # Exported by an earlier run of this script: reuse them.
            t_train = next((r["train_seconds"] for r in rows if r["seed"] == seed), None)
            diff = next((r["restored_max_logit_diff"] for r in rows if r["seed"] == seed), None)
        else:
            t0 = time.time()
            model = train(xtr, ytr, seed, a.epochs)
            t_train = time.time() - t0
            oracle = train(xtr[keep], ytr[keep], seed, a.epochs)
            torch.save({"model": model.state_dict(), "oracle": oracle.state_dict(), "train_seconds": t_train},
                       os.path.join(d, "state.pt"))
            print(f"seed {seed}: original test {accuracy(model, xte, yte):.4f} forget {accuracy(model, xtr[forget], ytr[forget]):.4f}; "
                  f"oracle test {accuracy(oracle, xte, yte):.4f} forget {accuracy(oracle, xtr[forget], ytr[forget]):.4f}; "
                  f"{t_train:.0f} s per training", flush=True)
            export(oracle, os.path.join(d, "oracle.onnx"), xtr, True)
            export(model, os.path.join(d, "preserve.onnx"), xtr, True)
            export(model, os.path.join(d, "folded.onnx"), xtr, False)
            restored = Restored(model, xtr).eval()
            diff = float((restored(xte) - model(xte)).abs().max())
            export(restored, os.path.join(d, "restored.onnx"), xtr, True)
        for e in EXPORTS:
            if (seed, e) in done:
                continue
            out = os.path.join(d, e + "-unlearned.onnx")
            binary, src = os.path.join(ROOT, "bin", "unlearn"), e
            if e == "folded-kept":
                binary, src = a.kept_bin, "folded"
            rc, secs = run_tool(binary, os.path.join(d, src + ".onnx"), os.path.join(d, "oracle.onnx"), out,
                                os.path.join(d, e + ".log"))
            row = {"seed": seed, "export": e, "epochs": a.epochs, "rc": rc, "seconds": round(secs, 1),
                   "train_seconds": round(t_train, 1), "restored_max_logit_diff": diff}
            if rc == 0:
                m = json.load(open(out[:-len(".onnx")] + ".metrics.json"))
                row["after"] = m["accuracy"]
                row["before"] = m["before"]["accuracy"]
                row["oracle"] = m["oracle"]["accuracy"]
                u = m["unlearning"]
                au = u.get("auto") or {}
                row["auto"] = {k: au.get(k) for k in ("lr", "stop_epoch", "epoch", "reason")}
                row["diverged_rates"] = [r["lr"] for r in au.get("lr_range_test", []) if r.get("diverged")]
                row["notes"] = u.get("notes")
                row["unlearn_s"] = m["unlearning"]["timings"].get("unlearn_s")
            with open(res_path, "a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)


if __name__ == "__main__":
    sys.exit(main())
