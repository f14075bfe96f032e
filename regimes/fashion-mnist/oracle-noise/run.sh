#!/usr/bin/env bash
# How far apart are two oracles? Retrains the seed-0 oracle of each forget
# set with other training seeds (same data, same forget set, same recipe as
# regimes/fashion-mnist.yaml) and compares each with the grid's oracle,
# exactly as the grid compares a method: Δ = grid oracle − second oracle.
# This is the noise floor of every Δ in RESULTS.md: no method can be
# expected to land closer to the oracle than another retraining does.
#
#   regimes/fashion-mnist/oracle-noise/run.sh [BIN] [SEEDS...]
# Needs the grid's cached seed-0 oracles (unlearn experiment --config
# regimes/fashion-mnist.yaml). Writes oracle-noise/*.json (committed).
set -euo pipefail
cd "$(dirname "$0")/../../.."
BIN=${1:-bin/unlearn}; shift || true
SEEDS=${*:-101 102}
DATA=/usr/share/datasets/fashion-mnist
RUNS=regimes/fashion-mnist/runs
OUT=regimes/fashion-mnist/oracle-noise
declare -A ORACLE=([iid]=oracle-3b09f89d62c9e96f [non-iid]=oracle-d32f3cd6abb47a03)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for fs in iid non-iid; do
  for s in $SEEDS; do
    "$BIN" train --model testdata/resnet_small_train.onnx --from-scratch --data "$DATA" \
      --exclude "$RUNS/forget-$fs-seed0.txt" --epochs 5 --lr 0.05 --batch-size 128 --momentum 0.9 \
      --weight-decay 5e-4 --schedule cosine --seed "$s" --threads 2 --out "$tmp/o.onnx" --quiet
    "$BIN" eval --model "$tmp/o.onnx" --data "$DATA" --forget "$RUNS/forget-$fs-seed0.txt" \
      --oracle "$RUNS/${ORACLE[$fs]}/model.onnx" --threads 2 --json "$OUT/$fs-seed0-train$s.json" --quiet
  done
done
/usr/bin/python3 - "$OUT" <<'PY'
import json, glob, sys
print("| forget set | second oracle's training seed | Δ forget | Δ MIA (confidence) | Δ test |")
print("|---|---|---|---|---|")
for f in sorted(glob.glob(sys.argv[1] + "/*.json")):
    d = json.load(open(f))["delta"]
    name = f.rsplit("/", 1)[1][:-5]
    fs, _, s = name.rpartition("-seed0-train")
    print(f"| {fs} | {s} | {100*d['accuracy']['forget']:+.2f} | {100*d['mia']['confidence']:+.2f} | {100*d['accuracy']['test']:+.2f} |")
PY
