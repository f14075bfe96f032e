#!/usr/bin/python3
"""explore.sh's table: one line per case of the metrics.json files in a folder.

Δ = oracle − run in points (the oracle's accuracies from results.jsonl's
oracle records, the original's forget accuracy from its sidecar); closed =
(original − run) ÷ (original − oracle) on the forget accuracy; within =
both Δ inside the run's stated tolerances; unl = the unlearning's seconds,
cmd = the whole command's wall clock."""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(out):
    oracle = {}
    for line in open(os.path.join(HERE, "results.jsonl")):
        r = json.loads(line)
        if r["kind"] == "oracle":
            oracle[(r["forget_set"], r["seed"])] = r["accuracy"]
    for kind in ("iid", "non-iid"):
        for s in range(3):
            path = os.path.join(out, f"{kind}-{s}.metrics.json")
            if not os.path.exists(path):
                continue
            u = json.load(open(path))["unlearning"]
            after, o = u["proxies"]["after"], oracle[(kind, s)]
            fa, ta = after["forget_accuracy"], after["test_accuracy"]
            orig = json.load(open(os.path.join(HERE, "models", f"original-seed{s}.json")))["forget_accuracy"][kind]
            closed = (orig - fa) / (orig - o["forget"])
            tol = u.get("tolerances") or {}
            est = u["proxies"].get("oracle_estimate") or {}
            within = abs(fa - o["forget"]) <= tol.get("forget", 0.01) and abs(ta - o["test"]) <= tol.get("test", 0.01)
            tpath = os.path.join(out, f"{kind}-{s}.time")
            cmd = float(open(tpath).read().split()[-1]) if os.path.exists(tpath) else 0
            rungs = " ".join("%g:%d:%.1f/%.1f" % (w["budget"], w["epochs"], 100 * w["forget_accuracy"],
                                                   100 * w["test_accuracy"]) for w in (u.get("widen") or []))
            flags = ",".join(f["kind"] for f in u.get("flags") or []) or "-"
            print("%-7s %d Δforget %+6.2f Δtest %+6.2f closed %4.0f%% estimate %5.2f tol %.1f/%.1f vouched %-5s "
                  "within %-5s unl %5.1fs cmd %5.1fs %s | %s" % (
                      kind, s, 100 * (o["forget"] - fa), 100 * (o["test"] - ta), 100 * closed,
                      100 * est.get("reference_accuracy", 0), 100 * tol.get("forget", 0), 100 * tol.get("test", 0),
                      u["vouched"], within, u["timings"].get("unlearn_s", 0), cmd, flags, rungs))


if __name__ == "__main__":
    main(sys.argv[1])
