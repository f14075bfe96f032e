#!/usr/bin/env bash
# Cost of unlearning against retraining, on an otherwise idle machine
# (issue 6's efficiency column, measured once outside the experiment grid,
# whose wall times share the machine with whatever else runs).
#
#   bench/efficiency.sh [--data DIR] [--threads N] [--out DIR] [--methods "del-fixed del-auto ..."]
#                       [--train-size 60000] [--epochs 5]
#
# Trains an original model with the recipe of regimes/fashion-mnist.yaml
# (small ResNet, 5 epochs, all 60,000 Fashion-MNIST training images), draws
# an IID forget set of 10 % (6,000 ids, fixed random source), retrains the
# oracle without it, and runs each method on the original. For each it prints
# the training or localization + unlearning seconds the tool reports (wall
# clock), the whole process's CPU seconds (user + system, evaluation
# included) and both as a fraction of the oracle's. It also prints how many
# cores other processes kept busy meanwhile: a figure above ~0.1 means the
# machine was not idle and the wall times are not clean.
set -euo pipefail
cd "$(dirname "$0")/.."

data=/usr/share/datasets/fashion-mnist
threads=2
out=""
methods="del-fixed del-auto finetune-fixed finetune-auto"
size=60000
epochs=5
while [ $# -gt 0 ]; do
  case "$1" in
    --data) data="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --methods) methods="$2"; shift 2 ;;
    --train-size) size="$2"; shift 2 ;;
    --epochs) epochs="$2"; shift 2 ;;
    -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "efficiency.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ -d "$data" ] || { echo "efficiency.sh: no dataset at $data (apt-get install dataset-fashion-mnist, or --data DIR)" >&2; exit 1; }
[ -x bin/unlearn ] || make -s build
[ -n "$out" ] || out=$(mktemp -d /tmp/unlearn-efficiency.XXXXXX)
mkdir -p "$out"
u=bin/unlearn
common=(--data "$data" --threads "$threads")

# busy_cores FILE: cores kept busy by other processes since the snapshot in
# FILE (total busy jiffies minus this script's children's CPU time).
snapshot() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat > "$1"; }
busy_cores() { # $1 snapshot, $2 our cpu seconds, $3 wall seconds
  read -r b0 t0 < "$1"
  read -r b1 t1 < <(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat)
  awk -v b="$((b1 - b0))" -v hz="$(getconf CLK_TCK)" -v own="$2" -v wall="$3" \
    'BEGIN{v=(b/hz-own)/wall; if (v<0) v=0; printf "%.2f", v}'
}

# timed NAME CMD...: runs CMD, keeps "wall cpu others" in $out/NAME.time.
timed() {
  local name=$1; shift
  snapshot "$out/$name.stat"
  local t0 t1
  t0=$(date +%s.%N)
  /usr/bin/time -f "%U %S" -o "$out/$name.rusage" "$@" > "$out/$name.log" 2>&1 ||
    { echo "efficiency.sh: $name failed; see $out/$name.log" >&2; tail -5 "$out/$name.log" >&2; exit 1; }
  t1=$(date +%s.%N)
  local wall cpu
  wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  cpu=$(awk '{printf "%.1f", $1+$2}' "$out/$name.rusage")
  echo "$wall $cpu $(busy_cores "$out/$name.stat" "$cpu" "$wall")" > "$out/$name.time"
}

recipe=(--epochs "$epochs" --lr 0.05 --batch-size 128 --weight-decay 5e-4 --momentum 0.9 --schedule cosine --seed 0)
if [ ! -f "$out/original.onnx" ]; then
  echo "training the original ($epochs epochs, $size images)..." >&2
  timed original $u train --model testdata/resnet_small_train.onnx --from-scratch --out "$out/original.onnx" \
    "${recipe[@]}" "${common[@]}" --log-format json
fi
shuf -i 0-$((size - 1)) -n $((size / 10)) --random-source=<(yes unlearn) | sort -n > "$out/forget.txt"
echo "retraining the oracle without $((size / 10)) ids..." >&2
timed oracle $u train --model testdata/resnet_small_train.onnx --from-scratch --exclude "$out/forget.txt" \
  --out "$out/oracle.onnx" "${recipe[@]}" "${common[@]}" --log-format json
oracle_s=$(grep -o '"train_s":[0-9.e+-]*' "$out/oracle.log" | tail -1 | cut -d: -f2)

for m in $methods; do
  case "$m" in
    del-fixed) args=(--method del --budget 0.1 --epochs 3 --lr 0.05 --proxies=false) ;;
    del-auto) args=(--method del --budget 0.1 --schedule auto) ;;
    finetune-fixed) args=(--method finetune --epochs 3 --lr 0.05 --proxies=false) ;;
    finetune-auto) args=(--method finetune --schedule auto) ;;
    default) args=() ;;
    *) echo "efficiency.sh: unknown method $m" >&2; exit 2 ;;
  esac
  echo "unlearning: $m..." >&2
  timed "$m" $u --model "$out/original.onnx" --forget "$out/forget.txt" --no-before --out "$out/$m.onnx" \
    --metrics "$out/$m.json" --seed 0 "${args[@]}" "${common[@]}" --log-format json
done

echo
echo "machine: $(nproc) cores, $(awk -F: '/model name/{print $2; exit}' /proc/cpuinfo | sed 's/^ *//'), threads $threads, commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
printf '%-16s %10s %10s %10s %10s %8s\n' run "tool s" "÷ retrain" "process cpu" "÷ retrain" others
read -r ow oc oo < "$out/oracle.time"
printf '%-16s %10.1f %10s %10.1f %10s %8s\n' "oracle (train)" "$oracle_s" 1 "$oc" 1 "$oo"
for m in $methods; do
  read -r w c o < "$out/$m.time"
  s=$(/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["unlearning"]["timings"]; print(t.get("localize_s",0)+t.get("unlearn_s",0))' "$out/$m.json")
  awk -v n="$m" -v s="$s" -v os="$oracle_s" -v c="$c" -v oc="$oc" -v o="$o" \
    'BEGIN{printf "%-16s %10.1f %10.3f %10.1f %10.3f %8s\n", n, s, s/os, c, c/oc, o}'
done
echo
echo "tool s: train_s of \`unlearn train\`, localize_s + unlearn_s of metrics.json (wall clock, evaluation excluded);"
echo "process cpu: user + system seconds of the whole command (data loading and evaluation included);"
echo "others: cores other processes kept busy during the command (0 on an idle machine). Files: $out"
