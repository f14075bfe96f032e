#!/usr/bin/env bash
# Compare the fit time of eval/svc with scikit-learn's
# SVC(C=3, gamma='auto', kernel='rbf') on the parity fixtures in
# testdata/svc, in one run on this machine.
#
#   bench/svc_vs_sklearn.sh            # every fixture, best of 1
#   SVC_BENCH_REPEATS=3 bench/svc_vs_sklearn.sh
#   SVC_BENCH_FILTER=_20000 bench/svc_vs_sklearn.sh   # fixtures whose name matches
#
# scikit-learn (LIBSVM) is single-threaded; Go is timed with GOMAXPROCS=1
# and with all cores (it fills kernel rows in parallel). Each time is the
# best of SVC_BENCH_REPEATS fits. Needs /usr/bin/python3 with scikit-learn
# (Debian's python3-sklearn) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-/usr/bin/python3}
REPEATS=${SVC_BENCH_REPEATS:-1}
FILTER=${SVC_BENCH_FILTER:-}
NCPU=$(getconf _NPROCESSORS_ONLN)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

go test -c -o "$tmp/svc.test" ./eval/svc

SVC_BENCH_REPEATS=$REPEATS "$PY" testdata/svc/make_svc_fixtures.py --time-only >"$tmp/sklearn.jsonl"

cpus=1
if [ "$NCPU" -gt 1 ]; then cpus="1,$NCPU"; fi
(cd eval/svc && "$tmp/svc.test" -test.run '^$' -test.bench "^BenchmarkFit\$/${FILTER:+.*$FILTER.*}" \
	-test.benchtime 1x -test.count "$REPEATS" -test.cpu "$cpus") >"$tmp/go.txt"

"$PY" - "$tmp/sklearn.jsonl" "$tmp/go.txt" "$NCPU" "$FILTER" <<'PYEOF'
import json, re, sys
sk = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ncpu, filt = int(sys.argv[3]), sys.argv[4]
go = {}
for line in open(sys.argv[2]):
    m = re.match(r"BenchmarkFit/(\S+?)(?:-(\d+))?\s+\d+\s+([\d.]+) ns/op", line)
    if m:
        key = (m.group(1), int(m.group(2) or 1))
        t = float(m.group(3)) / 1e9
        go[key] = min(go.get(key, t), t)
hdr = f"{'dataset':<18} {'n':>6} {'d':>3} {'sklearn s':>10} {'Go 1-thr s':>11} {'ratio':>6}"
if ncpu > 1:
    hdr += f" {'Go '+str(ncpu)+'-thr s':>11} {'ratio':>6}"
print(hdr)
print("-" * len(hdr))
tot = [0.0, 0.0, 0.0]
for r in sk:
    if filt and filt not in r["name"]:
        continue
    g1 = go.get((r["name"], 1))
    gn = go.get((r["name"], ncpu))
    if g1 is None:
        continue
    tot[0] += r["fit_seconds"]; tot[1] += g1
    row = f"{r['name']:<18} {r['n']:>6} {r['d']:>3} {r['fit_seconds']:>10.3f} {g1:>11.3f} {g1 / r['fit_seconds']:>6.2f}"
    if ncpu > 1 and gn is not None:
        tot[2] += gn
        row += f" {gn:>11.3f} {gn / r['fit_seconds']:>6.2f}"
    print(row)
print("-" * len(hdr))
row = f"{'total':<18} {'':>6} {'':>3} {tot[0]:>10.3f} {tot[1]:>11.3f} {tot[1] / tot[0]:>6.2f}"
if ncpu > 1:
    row += f" {tot[2]:>11.3f} {tot[2] / tot[0]:>6.2f}"
print(row)
print("ratio = Go time / sklearn time (lower is better)")
PYEOF
