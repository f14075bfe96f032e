#!/usr/bin/env bash
# The demo on the bundled model and data (testdata/). Grows with the tool:
# today it inspects the bundled ResNet and evaluates it on the bundled
# Fashion-MNIST subset with the bundled non-IID forget set.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/unlearn
MODEL=testdata/resnet_small_train.onnx
echo "== unlearn inspect --model $MODEL"
$BIN inspect --model "$MODEL"
echo
echo "== unlearn eval --model $MODEL --forget testdata/demo/forget_nonIID.txt"
$BIN eval --model "$MODEL" --data testdata/fashion --forget testdata/demo/forget_nonIID.txt
