#!/usr/bin/env bash
# From-scratch training, unlearn against PyTorch, same recipe and data:
# the small ResNet (testdata/resnet_small_train.onnx supplies the graph;
# --from-scratch re-initialises it) for EPOCHS epochs on the bundled
# Fashion-MNIST subset, SGD momentum 0.9, weight decay 5e-4, batch 128,
# lr 0.05 cosine to 0, for SEEDS. Prints the test accuracy of each run and
# the means. Needs Debian's python3-torch and dataset-fashion-mnist.
#
#   bench/from_scratch.sh            # EPOCHS=3 SEEDS=0,1,2 THREADS=all cores
set -euo pipefail
cd "$(dirname "$0")/.."
EPOCHS=${EPOCHS:-3}
SEEDS=${SEEDS:-0,1,2}
THREADS=${THREADS:-$(getconf _NPROCESSORS_ONLN)}
make -s build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
EPOCHS=$EPOCHS SEEDS=$SEEDS THREADS=$THREADS /usr/bin/python3 bench/from_scratch.py >"$tmp/torch.jsonl"
for s in ${SEEDS//,/ }; do
  bin/unlearn train --model testdata/resnet_small_train.onnx --data testdata/fashion --from-scratch \
    --epochs "$EPOCHS" --seed "$s" --threads "$THREADS" --out "$tmp/go_$s.onnx" 2>/dev/null |
    awk -v s="$s" 'NR==2 {gsub("%","",$3); print "{\"seed\": " s ", \"test_acc\": " $3/100 "}"}' >>"$tmp/go.jsonl"
done
/usr/bin/python3 - "$tmp/torch.jsonl" "$tmp/go.jsonl" "$EPOCHS" <<'PY'
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
g = [json.loads(l) for l in open(sys.argv[2])]
print(f"from-scratch training, {sys.argv[3]} epochs, small ResNet, testdata/fashion (4000 train / 1000 test)")
print(f"{'seed':>4}  {'PyTorch test acc':>16}  {'unlearn test acc':>16}")
for a, b in zip(t, g):
    print(f"{a['seed']:>4}  {100*a['test_acc']:>15.2f}%  {100*b['test_acc']:>15.2f}%")
mt = sum(a['test_acc'] for a in t) / len(t)
mg = sum(b['test_acc'] for b in g) / len(g)
print(f"mean  {100*mt:>15.2f}%  {100*mg:>15.2f}%   difference {100*(mg-mt):+.2f} points")
PY
