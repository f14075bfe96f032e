#!/usr/bin/env python3
"""Where the default's time goes (issue 65): one run of `unlearn` on a model,
its seconds split by stage and shown as a share of the whole command and of
retraining.

    bench/stage_profile.py --model M --data D --forget F [--retrain-s S]
        [--threads T] [--bin bin/unlearn] [-- extra flags for the command]

The command runs once, as a user would run it (the default unless the extra
flags say otherwise), with --metrics into a temporary folder; its wall time
is measured here, and its metrics.json gives the stages it times itself:

  evaluate before   accuracies, MIA features and proxies of the input model
  localize          DEL's scores and the mask
  range test        the auto schedule's learning-rate candidates
  epoch k: train    the training steps of round k
  epoch k: checks   the proxies measured after round k (the stopping rule's input)
  unlearn, other    the rest of the unlearning stage (engine build, reset, best-state copies)
  evaluate after    the result's accuracies, MIA and proxies
  retrain timing    timing full training steps for the retraining estimate
  load, write, exit the command's wall time outside the run's own total:
                    process start, model and data loading, writing the outputs

Retraining is --retrain-s (e.g. the oracle's own `train_s` from its sidecar,
on the same machine and threads) when given, else the run's own estimate
(`retrain_estimate_s`, from timed full training steps), which the table says.
Standard library only; run it with any python3. Nothing is written outside a
temporary folder, removed at the end.
"""

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            info = {}
            for line in f:
                k, _, v = line.partition(":")
                k, v = k.strip(), v.strip()
                if k in ("model name", "cpu family", "model") and k not in info:
                    info[k] = v
        return "%s (family %s, model %s), %d cores" % (
            info.get("model name", "?"), info.get("cpu family", "?"), info.get("model", "?"), os.cpu_count())
    except OSError:
        return platform.processor() or "unknown CPU"


def stages(m, wall):
    """Rows (stage, seconds) from a metrics.json and the command's wall time."""
    u = m["unlearning"]
    t = u["timings"]
    rows = [("evaluate before", t.get("evaluate_before_s", 0.0)), ("localize", t.get("localize_s", 0.0))]
    auto = u.get("auto") or {}
    range_s = auto.get("range_s", 0.0)
    if range_s:
        rows.append(("range test", range_s))
    epochs = (u.get("log") or {}).get("epochs") or []
    checks = {e["epoch"]: e.get("seconds", 0.0) for e in ((u.get("proxies") or {}).get("epochs") or [])}
    inside = range_s
    for e in epochs:
        rows.append(("epoch %d: train" % e["Epoch"], e["Seconds"]))
        inside += e["Seconds"]
        c = checks.get(e["Epoch"], 0.0)
        if c:
            rows.append(("epoch %d: checks" % e["Epoch"], c))
            inside += c
    rows.append(("unlearn, other", max(t.get("unlearn_s", 0.0) - inside, 0.0)))
    rows.append(("evaluate after", t.get("evaluate_after_s", 0.0)))
    if t.get("retrain_timing_s"):
        rows.append(("retrain timing", t["retrain_timing_s"]))
    rows.append(("load, write, exit", max(wall - t.get("total_s", 0.0), 0.0)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--forget", required=True)
    ap.add_argument("--retrain-s", type=float, default=0.0,
                    help="retraining's seconds on this machine and threads (e.g. the oracle sidecar's train_s)")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--bin", default="bin/unlearn")
    ap.add_argument("extra", nargs="*", help="flags passed on to the command (after --)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="unlearn-profile-") as tmp:
        metrics = os.path.join(tmp, "metrics.json")
        cmd = [a.bin, "--model", a.model, "--data", a.data, "--forget", a.forget,
               "--out", os.path.join(tmp, "out.onnx"), "--metrics", metrics, "-q"]
        if a.threads:
            cmd += ["--threads", str(a.threads)]
        cmd += a.extra
        start = time.monotonic()
        p = subprocess.run(cmd)
        wall = time.monotonic() - start
        if p.returncode != 0:
            sys.exit("stage_profile: %s exited %d" % (" ".join(cmd), p.returncode))
        with open(metrics) as f:
            m = json.load(f)
    u = m["unlearning"]
    retrain, basis = a.retrain_s, "--retrain-s"
    if retrain <= 0:
        retrain, basis = u.get("retrain_estimate_s") or 0.0, "the run's own estimate (timed full steps)"
    rows = stages(m, wall)
    total = u["timings"].get("total_s", 0.0)
    print("# stage profile: %s" % " ".join(cmd[1:]))
    print("# machine: %s; threads %s" % (cpu_name(), a.threads or "all"))
    auto = u.get("auto") or {}
    print("# method %s, schedule %s, %d epochs (%s), result epoch %s" % (
        u.get("method"), u.get("schedule"), len((u.get("log") or {}).get("epochs") or []),
        auto.get("reason", "-"), auto.get("epoch", "-")))
    print("# retraining: %.1f s (%s)" % (retrain, basis))
    print()
    print("| stage | s | % of command | ÷ retraining |")
    print("|---|---:|---:|---:|")
    for name, s in rows:
        share = 100 * s / wall if wall else 0.0
        ratio = s / retrain if retrain else float("nan")
        print("| %s | %.2f | %.1f | %.4f |" % (name, s, share, ratio))
    print("| **run (total_s)** | %.2f | %.1f | %.3f |" % (total, 100 * total / wall, total / retrain if retrain else float("nan")))
    print("| **command (wall)** | %.2f | 100.0 | %.3f |" % (wall, wall / retrain if retrain else float("nan")))
    # Grouped: what the cuts act on.
    groups = {}
    for name, s in rows:
        key = name.split(":")[-1].strip() if name.startswith("epoch") else name
        key = {"train": "training steps", "checks": "per-epoch checks"}.get(key, key)
        groups[key] = groups.get(key, 0.0) + s
    print()
    print("| grouped | s | % of command |")
    print("|---|---:|---:|")
    for k, s in sorted(groups.items(), key=lambda kv: -kv[1]):
        print("| %s | %.2f | %.1f |" % (k, s, 100 * s / wall))


if __name__ == "__main__":
    main()
