#!/usr/bin/python3
"""Writes a part of an experiment file's grid as an experiment file of its own.

Two processes must never run one row, and a regime's grid has no flag for
"only these rows", so a part runs from a copy of the file cut down to it:

  bench/subgrid.py regimes/resnet18.yaml --seeds 3 --forget-sets iid \\
      --methods "Retrain (tool)" --out-file /tmp/r18-iid-3.yaml
  taskset -c 0 nice -n 19 bin/unlearn experiment --config /tmp/r18-iid-3.yaml --shards 1 --shard 0

The copy keeps the records' folder (`out:`, unless --out gives a scratch
one), so its rows land beside the grid's (in results.shard-0.jsonl with
--shards 1; every shard's file is read by --report-only). It drops `notes:`
(a path relative to the file's folder) and `score:` (its rows name methods
and forget sets the cut may remove), and the forget sets' own `seeds:`
lists are cut to the seeds kept. Paths in the file are relative to the
working directory, so run the part from the same one as the grid.

--threads sets the runs' threads (one a core: the timings are against the
oracles' trainings at the grid's threads). Needs python3-yaml.
"""
import argparse
import sys

try:
    import yaml
except ImportError:
    sys.exit("subgrid.py: needs PyYAML (Debian: apt-get install python3-yaml)")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="the regime's experiment file")
    p.add_argument("--seeds", type=int, nargs="+", help="seeds to keep (default: all)")
    p.add_argument("--forget-sets", nargs="+", help="forget sets to keep, by name (default: all)")
    p.add_argument("--methods", nargs="+", help="methods to keep, by name (default: all)")
    p.add_argument("--threads", type=int, help="threads of every run (default: the file's)")
    p.add_argument("--out", help="another records folder, e.g. a scratch one (default: the file's)")
    p.add_argument("--out-file", required=True, help="where to write the part's experiment file")
    a = p.parse_args()
    with open(a.config) as f:
        cfg = yaml.safe_load(f)
    if not isinstance(cfg, dict):
        sys.exit(f"subgrid.py: {a.config}: not a mapping")
    cfg.pop("notes", None)
    cfg.pop("score", None)

    def keep(key, names, what, field="name"):
        items = cfg.get(key) or []
        have = [x.get(field) if isinstance(x, dict) else x for x in items]
        if names is None:
            return
        missing = [n for n in names if n not in have]
        if missing:
            sys.exit(f"subgrid.py: {a.config}: no {what} {', '.join(map(repr, missing))} (it has {', '.join(map(repr, have))})")
        cfg[key] = [x for x, h in zip(items, have) if h in names]

    keep("seeds", a.seeds, "seed", field=None)
    keep("forget_sets", a.forget_sets, "forget set")
    keep("methods", a.methods, "method")
    seeds = cfg.get("seeds") or []
    kept = []
    for fs in cfg.get("forget_sets") or []:
        if "seeds" in fs:
            fs["seeds"] = [s for s in fs["seeds"] if s in seeds]
            if not fs["seeds"]:
                if a.forget_sets is not None:
                    sys.exit(f"subgrid.py: forget set {fs['name']!r} runs on none of the seeds kept {seeds}")
                print(f"subgrid.py: left out forget set {fs['name']!r}: it runs on none of the seeds kept {seeds}",
                      file=sys.stderr)
                continue
        kept.append(fs)
    cfg["forget_sets"] = kept
    if a.threads is not None:
        cfg["threads"] = a.threads
    if a.out is not None:
        cfg["out"] = a.out
    with open(a.out_file, "w") as f:
        f.write(f"# {a.config} cut by bench/subgrid.py: {' '.join(sys.argv[1:])}\n")
        yaml.safe_dump(cfg, f, sort_keys=False, allow_unicode=True, width=1000)
    print(f"subgrid.py: wrote {a.out_file}: seeds {seeds}, forget sets "
          f"{[x['name'] for x in cfg.get('forget_sets') or []]}, methods {[x['name'] for x in cfg.get('methods') or []]}")


if __name__ == "__main__":
    main()
