#!/usr/bin/env bash
# The retraining estimate against retraining (issue 48).
#
#   bench/retrain_estimate.sh [--threads N] [--epochs 8] [--out DIR]
#
# For two models on the bundled data (testdata/fashion) and the bundled
# non-IID forget set: the bundled demo (scripts/demo.sh's command with
# --retrain-epochs) and the small VGG (experiments/archs/vgg_cnn.onnx,
# first trained from scratch on the whole training split with the train
# command's defaults, since the template is untrained). For each it runs the
# main command (the default, as the demo does) with --retrain-epochs N and
# reads its estimate of retraining from metrics.json (retrain_estimate_s,
# what it rests on, and what timing it cost), then runs the real thing,
# `unlearn train --exclude FORGET --from-scratch --epochs N` with the same
# recipe (the train command's defaults: lr 0.05, batch 128, the same
# threads), and prints its training seconds (train_s: the epochs alone, as
# the estimate) and its wall time, and the estimate ÷ train_s. The goal is
# a ratio within 20 % of 1. "others" is how many cores other processes kept
# busy during each command: above ~0.1 the machine was not idle and the
# timings are not clean.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=2
epochs=8
out=""
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "retrain_estimate.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -x bin/unlearn ] || make -s build
command -v jq > /dev/null || { echo "retrain_estimate.sh: needs jq" >&2; exit 1; }
[ -n "$out" ] || out=$(mktemp -d /tmp/unlearn-retrain-estimate.XXXXXX)
mkdir -p "$out"
u=bin/unlearn
data=testdata/fashion
forget=testdata/demo/forget_nonIID.txt

# others SNAPSHOT OWN_CPU_S WALL_S: cores kept busy by other processes since
# SNAPSHOT (busy jiffies minus this command's CPU seconds, over its wall time).
snapshot() { awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat > "$1"; }
others() {
  local b0 b1
  read -r b0 < "$1"
  b1=$(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat)
  awk -v b="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" -v own="$2" -v wall="$3" \
    'BEGIN{v=(b/hz-own)/wall; if (v<0) v=0; printf "%.2f", v}'
}

# timed NAME CMD...: runs CMD; leaves "wall cpu others" in $out/NAME.time.
timed() {
  local name=$1; shift
  snapshot "$out/$name.stat"
  /usr/bin/time -f '%e %U %S' -o "$out/$name.rusage" "$@"
  read -r wall usr sys < "$out/$name.rusage"
  local cpu
  cpu=$(awk -v a="$usr" -v b="$sys" 'BEGIN{print a+b}')
  echo "$wall $cpu $(others "$out/$name.stat" "$cpu" "$wall")" > "$out/$name.time"
}

# row NAME MODEL [EXTRA FLAGS...]: the estimate and the retraining.
rows=()
row() {
  local name=$1 model=$2; shift 2
  echo "== $name: unlearn --model $model --forget $forget --retrain-epochs $epochs $*" >&2
  timed "$name-unlearn" $u --model "$model" --data "$data" --forget "$forget" --threads "$threads" \
    --retrain-epochs "$epochs" --out "$out/$name.onnx" --metrics "$out/$name.metrics.json" -q "$@"
  echo "== $name: unlearn train --model $model --exclude $forget --from-scratch --epochs $epochs" >&2
  timed "$name-train" $u train --model "$model" --data "$data" --exclude "$forget" --from-scratch \
    --epochs "$epochs" --threads "$threads" --out "$out/$name.retrained.onnx" --log-format json > "$out/$name.train.txt" 2> "$out/$name.train.log"
  local m=$out/$name.metrics.json
  local est basis steps step cost unl train_s
  est=$(jq -r '.unlearning.retrain_estimate_s' "$m")
  basis=$(jq -r '.unlearning.retrain_estimate_basis' "$m")
  steps=$(jq -r '.unlearning.retrain_steps_timed' "$m")
  step=$(jq -r '.unlearning.retrain_step_s' "$m")
  cost=$(jq -r '.unlearning.timings.retrain_timing_s' "$m")
  unl=$(jq -r '.unlearning.timings.localize_s + .unlearning.timings.unlearn_s' "$m")
  train_s=$(jq -r 'select(.event == "result") | .train_s' "$out/$name.train.log")
  read -r uwall _ uoth < "$out/$name-unlearn.time"
  read -r twall _ toth < "$out/$name-train.time"
  rows+=("$(awk -v n="$name" -v e="$est" -v b="$basis" -v k="$steps" -v s="$step" -v c="$cost" -v un="$unl" -v uo="$uoth" \
    -v t="$train_s" -v tw="$twall" -v to="$toth" \
    'BEGIN{printf "%-6s %9.1f %7.3f %5d %7.1f %8.1f %6s %9.1f %7.1f %6s %7.2f", n, e, s, k, c, un, uo, t, tw, to, e/t}')")
  [ "$basis" = timed-full-steps ] || echo "retrain_estimate.sh: $name: basis $basis" >&2
}

row demo testdata/resnet_small_train.onnx --oracle testdata/demo/oracle_resnet_small.onnx
echo "== vgg: unlearn train --model experiments/archs/vgg_cnn.onnx --from-scratch --epochs $epochs (the original)" >&2
$u train --model experiments/archs/vgg_cnn.onnx --data "$data" --from-scratch --epochs "$epochs" --threads "$threads" \
  --out "$out/vgg_original.onnx" -q
row vgg "$out/vgg_original.onnx"

echo
echo "threads $threads, $epochs epochs; $(lscpu | sed -n 's/^Model name: *//p'); $(nproc) cores; load at the end:$(uptime | sed 's/.*load average://')"
printf '%-6s %9s %7s %5s %7s %8s %6s %9s %7s %6s %7s\n' model "estimate" "step s" steps "timing" "unlearn" others "train_s" "wall" others "ratio"
for r in "${rows[@]}"; do echo "$r"; done
echo "estimate: metrics.json retrain_estimate_s (steps timed after a warm-up, timing: their cost in s); unlearn: localize + unlearn s;"
echo "train_s: the train command's training seconds; wall: its whole process; ratio: estimate ÷ train_s; outputs in $out"
