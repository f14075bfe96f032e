#!/usr/bin/env bash
# --grad-channels inside the default, on a model of your choosing: the
# default's localization (DEL at 0.1, depth floor 0.4) and a fixed rft
# recipe (--epochs E at --lr L, so no range test and no stopping rule: both
# sides train the same steps), with and without --grad-channels, R rounds
# in alternating order, each a process of its own. It prints one row per
# round (unlearn_s, the localize + training seconds the metrics record, and
# test accuracy after) and the median ratio; "with ÷ without" < 1 means the
# flag is faster. bench/RESULTS.md, "The masked step in the default", has
# the first measurement (the suite's small ResNet: no gain).
#
#   bench/grad_channels_default.sh --model M --data D --forget F [--threads T]
#       [--rounds R] [--epochs E] [--lr L] [-- extra flags for the command]
#
# e.g. the ResNet-18 regime's seed-2 original and IID set, on one core:
#   taskset -c 0 bench/grad_channels_default.sh --threads 1 \
#     --model regimes/resnet18/models/original-seed2.onnx \
#     --data regimes/resnet18/work/fmnist32.npz \
#     --forget regimes/resnet18/forget/iid-seed2.txt --epochs 1 --lr 0.05 \
#     -- --mean 0.1924,0.1921,0.1936 --std 0.2441,0.2436,0.2450 --augment pad=4,flip
#
# Needs bin/unlearn (make build) and ONNX Runtime (make ort). Nothing is
# written outside a temporary folder, removed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
THREADS=$(nproc) ROUNDS=2 EPOCHS=2 LR=0.03 MODEL="" DATA="" FORGET=""
while [ $# -gt 0 ]; do
  case "$1" in
    --model) MODEL=$2; shift 2 ;;
    --data) DATA=$2; shift 2 ;;
    --forget) FORGET=$2; shift 2 ;;
    --threads) THREADS=$2; shift 2 ;;
    --rounds) ROUNDS=$2; shift 2 ;;
    --epochs) EPOCHS=$2; shift 2 ;;
    --lr) LR=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "grad_channels_default.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ -z "$MODEL" ] || [ -z "$DATA" ] || [ -z "$FORGET" ]; then
  echo "grad_channels_default.sh: --model, --data and --forget are required (see --help)" >&2
  exit 2
fi
BIN=${BIN:-bin/unlearn}
[ -x "$BIN" ] || { echo "grad_channels_default.sh: $BIN not found: run make build" >&2; exit 2; }
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.ort/libonnxruntime.so.1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

side() { # $1: round, $2: with or without
  local flag=""
  [ "$2" = with ] && flag=--grad-channels
  "$BIN" --model "$MODEL" --data "$DATA" --forget "$FORGET" --epochs "$EPOCHS" --lr "$LR" \
    --threads "$THREADS" --no-mia --no-before -q $flag \
    --out "$tmp/$1-$2.onnx" --metrics "$tmp/$1-$2.json" "${EXTRA[@]}"
}
EXTRA=("$@")
for r in $(seq 1 "$ROUNDS"); do
  if [ $((r % 2)) = 1 ]; then order="with without"; else order="without with"; fi
  for s in $order; do
    echo "round $r/$ROUNDS: $s --grad-channels" >&2
    side "$r" "$s"
  done
done

/usr/bin/env python3 - "$tmp" "$ROUNDS" <<'PY'
import json, statistics, sys
d, rounds = sys.argv[1], int(sys.argv[2])
def get(r, s):
    m = json.load(open(f"{d}/{r}-{s}.json"))
    t = m["unlearning"]["timings"]
    return t["localize_s"] + t["unlearn_s"], m["accuracy"]["test"], m["unlearning"]["mask"]
print("| round | order | unlearn_s without | unlearn_s with | with ÷ without | test acc without / with |")
print("|---|---|---:|---:|---:|---|")
ratios = []
for r in range(1, rounds + 1):
    (a, ta, _), (b, tb, mask) = get(r, "without"), get(r, "with")
    ratios.append(b / a)
    order = "with first" if r % 2 else "without first"
    print(f"| {r} | {order} | {a:.2f} | {b:.2f} | {b / a:.2f} | {100 * ta:.2f} / {100 * tb:.2f} % |")
print(f"\nmedian with ÷ without: {statistics.median(ratios):.2f} over {rounds} rounds; the mask selects "
      f"{mask['selected']:,} of {mask['total']:,} parameters ({100 * mask['selected'] / mask['total']:.1f} %)")
PY
