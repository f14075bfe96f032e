#!/usr/bin/env bash
# The masked training step of issue 31 against the full one: ResNet-18
# (bench/models/resnet18_cifar.onnx, batch 128), a mask of max(1, round(S·C))
# random output channels in every layer (per layer, seeded; weight slice,
# bias, BatchNormalization scale and shift), same thread count, one run:
#
#   pytorch                  full step (bench/train_step.py)
#   pytorch-masked           full backward, gradients multiplied by the mask, SGD
#   unlearn                  full step (bench/trainstep; +NCHWc where this
#                            machine has the kernels, train.NewEngine's default)
#   unlearn-masked           only the parameters the mask touches differentiated,
#                            masked SGD (what the unlearning algorithms run today)
#   unlearn-masked-channels  the same with autodiff.Spec.GradChannels: weight
#                            gradients of the selected output channels only
#
# Each measurement is a process of its own; the order of the sides rotates
# from round to round. The table gives median images/s over the rounds and
# ratios of medians (speed: > 1 is faster than the reference), with the range
# of the per-round ratios.
#
#   bench/masked_step.sh [--threads N] [--rounds R] [--batch B] [--mask S] [--out FILE]
#
# Environment: PY (Python with torch and torchvision, default /usr/bin/python3),
# TRAINSTEP (a built bench/trainstep), WARMUP and STEPS per process (1, 3).
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=${THREADS:-$(nproc)}
ROUNDS=${ROUNDS:-3}
BATCH=${BATCH:-128}
MASK=${MASK:-0.1}
WARMUP=${WARMUP:-1}
STEPS=${STEPS:-3}
OUTFILE=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --batch) BATCH=$2; shift 2 ;;
    --mask) MASK=$2; shift 2 ;;
    --out) OUTFILE=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "masked_step.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
PY=${PY:-/usr/bin/python3}
MODEL=bench/models/resnet18_cifar.onnx
[ -f "$MODEL" ] || $PY bench/make_models.py >&2
if [ -z "${ONNXRUNTIME_LIB:-}" ] && [ ! -f .ort/libonnxruntime.so.1 ]; then
  make -s ort
fi
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.ort/libonnxruntime.so.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${TRAINSTEP:-}" ]; then cp "$TRAINSTEP" "$tmp/trainstep"; else go build -o "$tmp/trainstep" ./bench/trainstep; fi
results="$tmp/results.jsonl"
export OMP_NUM_THREADS=$THREADS MKL_NUM_THREADS=$THREADS
NCHWC=""
if "$tmp/trainstep" -model bench/models/vit_small.onnx -steps 1 -warmup 0 -threads 1 -nchwc >/dev/null 2>&1; then NCHWC=-nchwc; fi

tag() { sed "s/^{/{\"round\": $1, /"; }
torch() { $PY bench/train_step.py --model resnet18 --threads "$THREADS" --batch "$BATCH" --warmup "$WARMUP" --steps "$STEPS" "$@"; }
ts() { "$tmp/trainstep" -model "$MODEL" -name resnet18 -threads "$THREADS" -batch "$BATCH" -warmup "$WARMUP" -steps "$STEPS" $NCHWC "$@"; }
side0() { torch; }
side1() { torch --mask "$MASK"; }
side2() { ts; }
side3() { ts -mask "$MASK"; }
side4() { ts -mask "$MASK" -grad-channels; }
for r in $(seq 1 "$ROUNDS"); do
  echo "round $r/$ROUNDS" >&2
  for i in 0 1 2 3 4; do
    "side$(((i + r - 1) % 5))" | tag "$r" >>"$results"
  done
done
[ -z "$OUTFILE" ] || cp "$results" "$OUTFILE"

$PY - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
med = statistics.median
def impl(r):
    return r["impl"].replace("-nchwc", "")
sides = ["pytorch", "pytorch-masked", "unlearn", "unlearn-masked", "unlearn-masked-channels"]
by = {s: [r for r in rows if impl(r) == s] for s in sides}
ips = {s: med(r["images_per_s"] for r in by[s]) for s in sides}
def ratio(s, ref):
    rr = {r["round"]: r["images_per_s"] for r in by[ref]}
    per = [r["images_per_s"] / rr[r["round"]] for r in by[s] if r["round"] in rr]
    return f"{ips[s] / ips[ref]:5.2f} ({min(per):.2f}–{max(per):.2f})"
print(f"{'side':<24} {'img/s':>7} {'step s':>7} {'vs unlearn full':>17} {'vs unlearn masked':>18} "
      f"{'vs PyTorch full':>17} {'vs PyTorch masked':>18}")
for s in sides:
    print(f"{s:<24} {ips[s]:7.1f} {med(r['median_s'] for r in by[s]):7.2f} {ratio(s, 'unlearn'):>17} "
          f"{ratio(s, 'unlearn-masked'):>18} {ratio(s, 'pytorch'):>17} {ratio(s, 'pytorch-masked'):>18}")
m = by["unlearn-masked-channels"][0]
print(f"\nratio: images/s of the row over the column's (> 1: faster), median over rounds (per-round range).")
print(f"threads {rows[0]['threads']}, batch {rows[0]['batch']}, mask {m['mask']} of every layer's channels "
      f"({100 * m['mask_selected']:.1f} % of the parameters; {m['mask_params']} tensors differentiated, "
      f"{m['restricted']} weight gradients restricted), {'NCHWc' if m['nchwc'] else 'plain Conv'}, "
      f"training-graph nodes: full {by['unlearn'][0]['nodes']}, masked {by['unlearn-masked'][0]['nodes']}, "
      f"channels {m['nodes']}")
print(f"PyTorch {by['pytorch'][0]['version']}, ONNX Runtime {m['ort']}")
others = [r["others_cores"] for r in rows]
print(f"cores other processes kept busy during the timed steps: {min(others):.2f}–{max(others):.2f} (median {med(others):.2f})")
PY
