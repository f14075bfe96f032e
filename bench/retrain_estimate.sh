#!/usr/bin/env bash
# The retraining estimate against retraining (issue 48).
#
#   bench/retrain_estimate.sh [--threads N] [--epochs 8] [--out DIR]
#   bench/retrain_estimate.sh --report-only DIR   (the table again from DIR)
#
# For two models on the bundled data (testdata/fashion) and the bundled
# non-IID forget set: the bundled demo (scripts/demo.sh's command with
# --retrain-epochs) and the small VGG (regimes/archs/vgg_cnn.onnx,
# first trained from scratch on the whole training split with the train
# command's defaults, since the template is untrained). For each it runs the
# main command (the default, as the demo does) with --retrain-epochs N and
# reads its estimate of retraining from metrics.json (retrain_estimate_s,
# what it rests on, and what timing it cost), then runs the real thing,
# `unlearn train --exclude FORGET --from-scratch --epochs N` with the same
# recipe (the train command's defaults: lr 0.05, batch 128, the same
# threads), and prints its training seconds (train_s: the epochs alone, as
# the estimate) and its wall time, and the estimate ÷ train_s. The goal is
# a ratio within 20 % of 1. It also prints the run's own seconds against
# both and whether it advised retraining, so that the advice can be checked
# against the measurement. "others" is how many cores other processes kept
# busy during each command: above ~0.1 the machine was not idle and the
# timings are not clean.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=2
epochs=8
out=""
report_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --threads) threads="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --report-only) report_only=1; out="$2"; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "retrain_estimate.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$report_only" = 1 ] || [ -x bin/unlearn ] || make -s build
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

# run NAME MODEL [EXTRA FLAGS...]: the estimate and the retraining.
run() {
  local name=$1 model=$2; shift 2
  echo "== $name: unlearn --model $model --forget $forget --retrain-epochs $epochs $*" >&2
  timed "$name-unlearn" $u --model "$model" --data "$data" --forget "$forget" --threads "$threads" \
    --retrain-epochs "$epochs" --out "$out/$name.onnx" --metrics "$out/$name.metrics.json" -q "$@"
  echo "== $name: unlearn train --model $model --exclude $forget --from-scratch --epochs $epochs" >&2
  timed "$name-train" $u train --model "$model" --data "$data" --exclude "$forget" --from-scratch \
    --epochs "$epochs" --threads "$threads" --out "$out/$name.retrained.onnx" --log-format json > "$out/$name.train.txt" 2> "$out/$name.train.log"
}

# row NAME: the table's row from run NAME's files.
row() {
  local name=$1 m=$out/$1.metrics.json
  local est basis steps step cost unl advice train_s uoth twall toth
  est=$(jq -r '.unlearning.retrain_estimate_s' "$m")
  basis=$(jq -r '.unlearning.retrain_estimate_basis' "$m")
  steps=$(jq -r '.unlearning.retrain_steps_timed' "$m")
  step=$(jq -r '.unlearning.retrain_step_s' "$m")
  cost=$(jq -r '.unlearning.timings.retrain_timing_s' "$m")
  unl=$(jq -r '.unlearning.timings.localize_s + .unlearning.timings.unlearn_s' "$m")
  advice=$(jq -r 'if any(.unlearning.notes[]?; startswith("retraining is cheaper")) then "retrain" else "-" end' "$m")
  train_s=$(jq -r 'select(.event == "result") | .train_s' "$out/$name.train.log")
  read -r _ _ uoth < "$out/$name-unlearn.time"
  read -r twall _ toth < "$out/$name-train.time"
  awk -v n="$name" -v e="$est" -v s="$step" -v k="$steps" -v c="$cost" -v t="$train_s" -v tw="$twall" \
    -v un="$unl" -v a="$advice" -v uo="$uoth" -v to="$toth" \
    'BEGIN{printf "%-5s %8.1f %6.3f %5d %6.1f %8.1f %6.1f %6.2f %8.1f %7.2f %7.2f %-7s %6s %6s\n", n, e, s, k, c, t, tw, e/t, un, un/e, un/t, a, uo, to}'
  [ "$basis" = timed-full-steps ] || echo "retrain_estimate.sh: $name: basis $basis" >&2
}

if [ "$report_only" = 0 ]; then
  run demo testdata/resnet_small_train.onnx --oracle testdata/demo/oracle_resnet_small.onnx
  echo "== vgg: unlearn train --model regimes/archs/vgg_cnn.onnx --from-scratch --epochs $epochs (the original)" >&2
  $u train --model regimes/archs/vgg_cnn.onnx --data "$data" --from-scratch --epochs "$epochs" --threads "$threads" \
    --out "$out/vgg_original.onnx" -q
  run vgg "$out/vgg_original.onnx"
  echo "threads $threads, $epochs epochs; $(lscpu | sed -n 's/^Model name: *//p'); $(nproc) cores; load at the end:$(uptime | sed 's/.*load average://')" > "$out/machine.txt"
fi

echo
cat "$out/machine.txt"
printf '%-5s %8s %6s %5s %6s %8s %6s %6s %8s %7s %7s %-7s %6s %6s\n' model estimate step_s steps timing train_s wall ratio unlearn run/est run/train advice others others
for name in demo vgg; do row "$name"; done
cat <<'EOT'
estimate: metrics.json's retrain_estimate_s, from `steps` full training steps of step_s s each, timed
  after a warm-up (timing: the whole measurement, s); train_s: `unlearn train --from-scratch`'s
  training seconds (wall: its whole process); ratio: estimate ÷ train_s (goal: within 20 % of 1);
  unlearn: the run's localize + unlearn s; run/est, run/train: it ÷ the estimate, ÷ train_s (above 1: retraining is
  cheaper); advice: "retrain" where the run printed "retraining is cheaper here"; others: cores
  other processes kept busy during the unlearning run and during the training (above ~0.1: not idle).
EOT
echo "outputs in $out"
