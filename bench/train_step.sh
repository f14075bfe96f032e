#!/usr/bin/env bash
# One training step (forward in train mode, mean cross-entropy, backward, SGD
# momentum 0.9 update) of a CIFAR-style ResNet-18 (1 input channel, 28×28) and
# of the small ViT, batch 128: PyTorch (bench/train_step.py) against unlearn
# (bench/trainstep: the generated training graph on ONNX Runtime, the update in
# Go), with the same thread count, on the same machine, in one run.
#
# Every measurement is a process of its own (peak memory is per process); the
# sides alternate, and their order rotates from round to round so that none
# always runs first. Each process reports the median of its timed steps; the
# table gives the median over the rounds, the ratio of those medians and the
# range of the per-round ratios (PyTorch and unlearn of the same round).
# "unlearn" is the plain training graph (standard ai.onnx ops, what
# `unlearn artifacts` exports); "+NCHWc" is the same with the NCHWc Conv
# kernels of ONNX Runtime's CPU provider (cpu.Lowering.NCHWcBlock), which
# train.NewEngine uses by default where this machine has them: the tool's
# own training speed is the "+NCHWc" column.
# Generates bench/models/ (bench/make_models.py) if missing. Needs Debian's
# python3-torch and python3-torchvision, and ONNX Runtime (make ort).
#
#   bench/train_step.sh                  # threads = nproc, 3 rounds
#   bench/train_step.sh --threads 1 --rounds 5 --models resnet18
#
# Options (or the environment variables THREADS, ROUNDS, BATCH, MODELS):
#   --threads N   intra-op threads of both sides (default: nproc)
#   --rounds R    rounds per model (default 3)
#   --batch B     batch size (default 128)
#   --models L    space- or comma-separated subset of "resnet18 vit_small"
#   --out FILE    also keep every JSON line in FILE
#   --no-nchwc    skip the NCHWc variant
# Environment only: PY, the Python with torch and torchvision (default
# /usr/bin/python3, Debian's); TRAINSTEP, an already built bench/trainstep
# binary to use instead of building one with Go (a machine without Go).
# Takes about 4 minutes on an idle 2-core machine with the defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-3}
BATCH=${BATCH:-128}
MODELS=${MODELS:-resnet18 vit_small}
OUTFILE=""
NCHWC=1
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --models) MODELS=$2; shift 2 ;;
    --out) OUTFILE=$2; shift 2 ;;
    --no-nchwc) NCHWC=0; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "train_step.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
MODELS=${MODELS//,/ }
PY=${PY:-/usr/bin/python3}

declare -A FILE=([resnet18]=resnet18_cifar.onnx [vit_small]=vit_small.onnx)
# Steps per process: a ResNet-18 step takes about a second on 2 cores, a ViT
# step about 10–20 ms.
declare -A WARMUP=([resnet18]=2 [vit_small]=10)
declare -A STEPS=([resnet18]=8 [vit_small]=50)
for m in $MODELS; do
  [ -n "${FILE[$m]:-}" ] || { echo "train_step.sh: unknown model $m (want resnet18, vit_small)" >&2; exit 2; }
  if [ ! -f "bench/models/${FILE[$m]}" ]; then
    echo "generating bench/models/ (bench/make_models.py)" >&2
    $PY bench/make_models.py >&2
  fi
done
if [ -z "${ONNXRUNTIME_LIB:-}" ] && [ ! -f .ort/libonnxruntime.so.1 ]; then
  make -s ort
fi
# onnxrt searches beside the executable, not the working directory: name the
# repository's library for binaries built elsewhere.
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.ort/libonnxruntime.so.1}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${TRAINSTEP:-}" ]; then
  cp "$TRAINSTEP" "$tmp/trainstep"
else
  go build -o "$tmp/trainstep" ./bench/trainstep
fi
results="$tmp/results.jsonl"
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS

tag() { sed "s/^{/{\"round\": $1, /"; }
run_torch() {
  $PY bench/train_step.py --model "$1" --threads "$THREADS" --batch "$BATCH" \
    --warmup "${WARMUP[$1]}" --steps "${STEPS[$1]}" | tag "$2" >>"$results"
}
run_unlearn() {
  "$tmp/trainstep" -model "bench/models/${FILE[$1]}" -name "$1" -threads "$THREADS" -batch "$BATCH" \
    -warmup "${WARMUP[$1]}" -steps "${STEPS[$1]}" | tag "$2" >>"$results"
}
run_nchwc() {
  "$tmp/trainstep" -model "bench/models/${FILE[$1]}" -name "$1" -threads "$THREADS" -batch "$BATCH" \
    -warmup "${WARMUP[$1]}" -steps "${STEPS[$1]}" -nchwc | tag "$2" >>"$results"
}
sides=(run_torch run_unlearn)
if [ "$NCHWC" = 1 ]; then
  if "$tmp/trainstep" -model bench/models/vit_small.onnx -steps 1 -warmup 0 -threads 1 -nchwc >/dev/null 2>&1; then
    sides+=(run_nchwc)
  else
    echo "no NCHWc kernels in this ONNX Runtime here: skipping the +NCHWc variant" >&2
  fi
fi
for m in $MODELS; do
  for r in $(seq 1 "$ROUNDS"); do
    echo "$m round $r/$ROUNDS" >&2
    n=${#sides[@]}
    for i in $(seq 0 $((n - 1))); do
      "${sides[$(((i + r - 1) % n))]}" "$m" "$r"
    done
  done
done
[ -z "$OUTFILE" ] || cp "$results" "$OUTFILE"

$PY - "$results" <<'PY'
import json, statistics, sys

rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
def of(model, impl):
    return [r for r in rows if r["model"] == model and r["impl"] == impl]


def speed(model, impl, ref):
    """Median images/s, its ratio to ref's and the range of per-round ratios."""
    u = of(model, impl)
    if not u:
        return "", "", ""
    ui = med(r["images_per_s"] for r in u)
    by_round = {r["round"]: r["images_per_s"] for r in of(model, ref)}
    rr = [r["images_per_s"] / by_round[r["round"]] for r in u if r["round"] in by_round]
    return f"{ui:.1f}", f"{ui / med(by_round.values()):.2f}", f"{min(rr):.2f}–{max(rr):.2f}"


print(f"{'model':<10} {'threads':>7} {'batch':>5} {'PyTorch img/s':>13} {'unlearn img/s':>13} {'ratio':>6} "
      f"{'(rounds)':>11} {'+NCHWc img/s':>12} {'ratio':>6} {'(rounds)':>11} "
      f"{'PyTorch MB':>10} {'unlearn MB':>10} {'ratio':>6}")
models = list(dict.fromkeys(r["model"] for r in rows))
for model in models:
    t = of(model, "pytorch")
    ti = med(r["images_per_s"] for r in t)
    ui, ur, urr = speed(model, "unlearn", "pytorch")
    ni, nr, nrr = speed(model, "unlearn-nchwc", "pytorch")
    tm, um = med(r["peak_mb"] for r in t), med(r["peak_mb"] for r in of(model, "unlearn"))
    print(f"{model:<10} {t[0]['threads']:>7} {t[0]['batch']:>5} {ti:>13.1f} {ui:>13} {ur:>6} {urr:>11} "
          f"{ni:>12} {nr:>6} {nrr:>11} {tm:>10.0f} {um:>10.0f} {um / tm:>6.2f}")
print()
print("ratio: unlearn/PyTorch (images/s: > 1 means unlearn is faster; memory: < 1 means unlearn uses less).")
print("MB: peak resident set size (VmHWM) of the process (unlearn: plain graph), median over rounds.")
for model in models:
    t, u = of(model, "pytorch"), of(model, "unlearn")
    n = of(model, "unlearn-nchwc")
    line = (f"  {model}: before the first step PyTorch {med(r['base_mb'] for r in t):.0f} MB, unlearn "
            f"{med(r['base_mb'] for r in u):.0f} MB; unlearn's SGD update (Go) {1e3 * med(r['update_s'] for r in u):.1f} ms "
            f"of a {1e3 * med(r['median_s'] for r in u):.1f} ms step")
    if n:
        line += f"; +NCHWc peak {med(r['peak_mb'] for r in n):.0f} MB"
    print(line)
blocks = sorted({r["nchwc"] for r in rows if r["impl"] == "unlearn-nchwc"})
print(f"PyTorch {next(r['version'] for r in rows if r['impl'] == 'pytorch')}, "
      f"ONNX Runtime {next(r['ort'] for r in rows if r['impl'] == 'unlearn')}"
      + (f", NCHWc block {blocks[0]}" if blocks else ""))
if rows[0]["threads"] == 1:
    print("CPU seconds per step, median over rounds (one thread each: barely disturbed by other processes):")
    for model in models:
        tc = med(r["cpu_s"] for r in of(model, "pytorch"))
        line = f"  {model}: PyTorch {tc:.3f} s, unlearn {med(r['cpu_s'] for r in of(model, 'unlearn')):.3f} s " \
               f"(speed ratio {tc / med(r['cpu_s'] for r in of(model, 'unlearn')):.2f})"
        if of(model, "unlearn-nchwc"):
            nc = med(r["cpu_s"] for r in of(model, "unlearn-nchwc"))
            line += f", +NCHWc {nc:.3f} s (ratio {tc / nc:.2f})"
        print(line)
others = [r["others_cores"] for r in rows]
print(f"cores other processes kept busy during the timed steps: {min(others):.2f}–{max(others):.2f} "
      f"(median {med(others):.2f})")
if med(others) > 0.2:
    print("WARNING: other processes were using the CPU: these are not an idle machine's timings. With more than\n"
          "one thread, oversubscription slows PyTorch's OpenMP threads (which wait for each other at every\n"
          "operation) far more than ONNX Runtime's pool, which overstates unlearn; compare on an idle machine.")
PY
