#!/usr/bin/env bash
# The Conv forward and gradient formulations of the training graph, timed on
# the layer shapes of a CIFAR-style ResNet-18 (28×28 input, batch 128) on ONNX
# Runtime: what train/lowering/cpu's chooseInputForm/chooseWeightForm and
# nchwc.go cite (bench/RESULTS.md). Runs train/lowering/cpu's TestConvFormTimings;
# see its comment for what each variant is and how it is timed.
#
#   bench/conv_forms.sh                 # 2 threads, 7 rounds, every layer
#   THREADS=1 ROUNDS=11 bench/conv_forms.sh
#   ONLY=6 bench/conv_forms.sh          # the 512-channel 4×4 layer alone
#   CHUNKS="8 16" bench/conv_forms.sh   # also dW gemm over chunks of 8, 16 images
#
# Takes about 2 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${ONNXRUNTIME_LIB:-}" ] && [ ! -f .ort/libonnxruntime.so.1 ]; then
  make -s ort
fi
# onnxrt searches beside the executable, not the working directory: name the
# repository's library for binaries built elsewhere.
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$PWD/.ort/libonnxruntime.so.1}
export UNLEARN_CONV_BENCH=1 UNLEARN_REQUIRE_ORT=1
export UNLEARN_CONV_BENCH_THREADS=${THREADS:-2} UNLEARN_CONV_BENCH_ROUNDS=${ROUNDS:-7}
export UNLEARN_CONV_BENCH_BATCH=${BATCH:-128}
[ -z "${ONLY:-}" ] || export UNLEARN_CONV_BENCH_ONLY=$ONLY
[ -z "${CHUNKS:-}" ] || export UNLEARN_CONV_BENCH_CHUNKS=$CHUNKS
go test -count=1 -v -timeout 30m -run '^TestConvFormTimings$' ./train/lowering/cpu/ |
  grep -v -e '^=== RUN' -e '^--- PASS' -e '^PASS$' -e '^ok '
