#!/usr/bin/env python3
"""Copies what bench/replay reads of experiment run folders (metrics.json cut
to counts, flags, the auto schedule, its proxies and epoch times; record.json
as is) into this folder, one folder per run, so that the replay of the
default runs in NOTES.md reruns on a fresh clone (runs/ is not committed):

    /usr/bin/python3 regimes/resnet18/replay/trim.py regimes/resnet18/runs/run-KEY ...
    go run ./bench/replay -tol 0.005,0.01,0.015,1se,1.5se regimes/resnet18/replay/*/
"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

for src in sys.argv[1:]:
    with open(os.path.join(src, "metrics.json")) as f:
        m = json.load(f)
    with open(os.path.join(src, "record.json")) as f:
        rec = json.load(f)
    u = m["unlearning"]
    out = {"counts": m["counts"], "unlearning": {
        "auto": u["auto"], "proxies": {"epochs": u["proxies"]["epochs"]},
        "log": {"epochs": u["log"]["epochs"]}, "timings": u["timings"], "flags": u.get("flags", [])}}
    # Only letters, digits and '-' from the record, so a name stays in this folder.
    name = re.sub(r"[^a-z0-9-]+", "-", f"{rec['name'].lower().split()[0]}-{rec['forget_set']}-seed{int(rec['seed'])}-{rec['key']}")
    dst = os.path.join(HERE, name)
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(dst, "metrics.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    with open(os.path.join(dst, "record.json"), "w") as f:
        json.dump(rec, f, separators=(",", ":"))
        f.write("\n")
    print(dst)
