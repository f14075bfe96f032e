#!/usr/bin/env bash
# Trains the ResNet-18 regime's twelve models (issue 42) on a GPU machine and
# brings them back, for a session that is lent one: on this host's CPU one
# model takes about 2 h a core (regimes/resnet18/NOTES.md), on an H200
# about 80 s. Modes:
#
#   bench/r18_gpu.sh train [--dry-run]   there: every model of seeds 0-2 with train.py's
#                                        RECIPE, --device cuda, all at once; each .onnx cut
#                                        into pieces of 15 MiB for the way back
#   bench/r18_gpu.sh fetch NAME          there: NAME's pieces and sidecar into $OUT (one
#                                        model a call: 45 MB, and 64 MiB come back a call)
#   bench/r18_gpu.sh assemble DIR        here: the pieces in DIR (a call's files_at) joined
#                                        into regimes/resnet18/models/NAME.onnx (or
#                                        $UNLEARN_R18_MODELS), checked against the sidecar's
#                                        sha256, the sidecar beside it
#
# The calls, back to back (the machine keeps regimes/resnet18/work/ between
# calls while held; it is released after ~30 s idle):
#
#   run(command="bench/r18_gpu.sh train", carry=["regimes/resnet18/work/fmnist32.npz"], timeout_s=540)
#   run(command="bench/r18_gpu.sh fetch original-seed0")     then, here: bench/r18_gpu.sh assemble <files_at>
#   ...                                                   one call per model (12)
#
# The sidecars record the GPU, PyTorch's version and the seconds there; the
# cost column needs this host's: `train.py time` (two epochs on an idle core
# each) rewrites train_s before the grid runs. --dry-run: 200 images, one
# epoch, on the CPU, seed 0 only, to check the commands here.
set -euo pipefail
cd "$(dirname "$0")/.."
STORE=regimes/resnet18/work/gpu
NPZ=regimes/resnet18/work/fmnist32.npz
PIECE=15M

die() {
  echo "r18_gpu: $*" >&2
  exit 1
}

train_mode() {
  local dev=cuda py=python3 seeds="0 1 2" epochs=() data=$NPZ
  if [ "${1:-}" = "--dry-run" ]; then
    dev=cpu py=/usr/bin/python3 seeds=0 epochs=(--epochs 1) data=$STORE/small.npz
    mkdir -p "$STORE"
    $py -c "import numpy as np, sys; z = np.load(sys.argv[1]); np.savez(sys.argv[2], x_train=z['x_train'][:200], y_train=z['y_train'][:200], x_test=z['x_test'][:100], y_test=z['y_test'][:100])" "$NPZ" "$data"
  fi
  [ -f "$NPZ" ] || die "$NPZ is missing: carry it (run(..., carry=[\"$NPZ\"]))"
  mkdir -p "$STORE/models" "$STORE/pieces" "$STORE/cache" "$STORE/logs"
  local s f pids=()
  for s in $seeds; do
    for f in "" iid non-iid class-5; do
      UNLEARN_R18_MODELS="$STORE/models" UNLEARN_R18_CACHE="$STORE/cache" UNLEARN_R18_DATA="$data" PYTHONUNBUFFERED=1 \
        $py regimes/resnet18/train.py train --seed "$s" ${f:+--forget $f} --device "$dev" --threads 1 "${epochs[@]}" \
        >"$STORE/logs/seed$s-${f:-original}.log" 2>&1 &
      pids+=($!)
    done
  done
  local failed=0 p
  for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
  local m n=0
  for m in "$STORE"/models/*.onnx; do
    [ -f "$m" ] || continue
    split -b "$PIECE" -d -a 1 "$m" "$STORE/pieces/$(basename "$m" .onnx).onnx.part-"
    n=$((n + 1))
  done
  grep -h "train .* test" "$STORE"/logs/*.log | grep -v epoch || true
  echo "r18_gpu: $n models trained and cut into pieces in $STORE/pieces; $failed trainings failed (logs in $STORE/logs)"
  [ "$failed" = 0 ] || tail -n 5 "$STORE"/logs/*.log >&2
  [ "$failed" = 0 ]
}

fetch_mode() {
  local name=${1:?name a model, e.g. original-seed0}
  local out=${OUT:?OUT is the folder the device tool brings back}
  [[ "$name" =~ ^(original|oracle-(iid|non-iid|class-5))-seed[0-9]+$ ]] || die "$name: not a model of the regime"
  ls "$STORE/pieces/$name.onnx.part-"* >/dev/null 2>&1 || die "no pieces of $name in $STORE/pieces (train first, on this machine)"
  cp "$STORE/pieces/$name.onnx.part-"* "$STORE/models/$name.json" "$out/"
  ls -la "$out"
}

assemble_mode() {
  local dir=${1:?the folder the fetch call brought back}
  local side name want got
  side=$(ls "$dir"/*.json 2>/dev/null | head -1)
  [ -n "$side" ] || die "no sidecar in $dir"
  name=$(basename "$side" .json)
  [[ "$name" =~ ^(original|oracle-(iid|non-iid|class-5))-seed[0-9]+$ ]] || die "$name: not a model of the regime"
  want=$(/usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["onnx_sha256"])' "$side")
  local dest=${UNLEARN_R18_MODELS:-regimes/resnet18/models}
  local tmp=$dest/.$name.onnx.tmp
  mkdir -p "$dest"
  cat "$dir/$name.onnx.part-"* >"$tmp"
  got=$(sha256sum "$tmp" | cut -d' ' -f1)
  if [ "$got" != "$want" ]; then
    rm -f "$tmp"
    die "$name: the pieces join to sha256 $got, the sidecar names $want"
  fi
  mv "$tmp" "$dest/$name.onnx"
  cp "$side" "$dest/$name.json"
  echo "r18_gpu: $dest/$name.onnx (sha256 ok) and its sidecar"
}

case "${1:-}" in
  train) shift; train_mode "$@" ;;
  fetch) shift; fetch_mode "$@" ;;
  assemble) shift; assemble_mode "$@" ;;
  -h | --help | "") sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown mode $1 (train, fetch, assemble; see --help)" ;;
esac
