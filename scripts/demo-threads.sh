#!/usr/bin/env bash
# Checks that the demo's result does not depend on the thread count and
# matches the README's sample (issue 30): runs the recommended default on
# the bundled model and non-IID forget set with --threads 1 and --threads 2,
# prints each run's forget and test accuracy and the written model's
# sha256, and fails when either accuracy lies more than 1.5 points from the
# other run's or from the README sample's "model" column. Outputs go to a
# temporary folder that is removed afterwards. Needs bin/unlearn and the
# ONNX Runtime library (`make build ort`; `make demo-threads` does both).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=bin/unlearn
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The README sample's model column: the lines "accuracy   train ..." and
# "forget ..." of the indented block after "make demo".
readme_acc() { # $1: metric name (test or forget)
  awk -v m="$1" '/^    metric +before +model +oracle/ {on=1; next}
    on && $0 !~ /^    / {exit}
    on { for (i = 1; i <= NF; i++) if ($i == m) { v = $(i+2); sub("%", "", v); print v; exit } }' README.md
}
want_test=$(readme_acc test)
want_forget=$(readme_acc forget)
if [ -z "$want_test" ] || [ -z "$want_forget" ]; then
  echo "demo-threads: could not read the demo sample's test and forget accuracy from README.md" >&2
  exit 1
fi

declare -A got
for th in 1 2; do
  $BIN --model testdata/resnet_small_train.onnx --forget testdata/demo/forget_nonIID.txt \
    --out "$tmp/t$th.onnx" --metrics "$tmp/t$th.json" --threads "$th" --retrain-epochs 8 -q
  got[$th]=$(/usr/bin/env python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
a = m["accuracy"]
print("%.2f %.2f" % (100 * a["test"], 100 * a["forget"]))' "$tmp/t$th.json")
  sum=$(sha256sum "$tmp/t$th.onnx" | cut -c1-64)
  echo "threads $th: test ${got[$th]% *} %, forget ${got[$th]#* } %, model sha256 $sum"
done
echo "README sample: test $want_test %, forget $want_forget %"

/usr/bin/env python3 - "${got[1]}" "${got[2]}" "$want_test" "$want_forget" <<'EOF'
import sys
t1, f1 = map(float, sys.argv[1].split())
t2, f2 = map(float, sys.argv[2].split())
wt, wf = float(sys.argv[3]), float(sys.argv[4])
bad = []
for name, a, b in [("test, threads 1 vs 2", t1, t2), ("forget, threads 1 vs 2", f1, f2),
                   ("test, threads 1 vs README", t1, wt), ("forget, threads 1 vs README", f1, wf),
                   ("test, threads 2 vs README", t2, wt), ("forget, threads 2 vs README", f2, wf)]:
    if abs(a - b) > 1.5:
        bad.append("%s: %.2f vs %.2f" % (name, a, b))
if bad:
    print("demo-threads: more than 1.5 points apart: " + "; ".join(bad), file=sys.stderr)
    sys.exit(1)
print("demo-threads: within 1.5 points of each other and of the README")
EOF
