#!/bin/bash
# Runs the default command with extra flags on the regime's six cases (IID
# and non-IID, seeds 0-2), each with its oracle, and prints one line per case
# (explore_table.py): Δ forget and Δ test against the oracle (oracle − run,
# points), the share of the memorization gap closed, the run's estimate and
# stated tolerances, the verdict, the seconds, the flags and every widening
# rung (budget:epochs:forget/test). A quick probe of a candidate default,
# beside the experiment's rows (NOTES.md, "Where the memory is"):
#
#   regimes/fashion-mnist-memorize/explore.sh TAG [FLAG ...]
#
# Outputs go to $EXPLORE_OUT/TAG (default /tmp/unlearn-explore/TAG); a case
# whose metrics exist is not run again. BIN picks the tool (bin/unlearn).
set -u
tag=$1
shift
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${BIN:-$repo/bin/unlearn}
out=${EXPLORE_OUT:-/tmp/unlearn-explore}/$tag
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$repo/.ort/libonnxruntime.so.1}
mkdir -p "$out"
for set in iid non-iid; do
	for s in 0 1 2; do
		m=$out/$set-$s
		[ -f "$m.metrics.json" ] && continue
		/usr/bin/time -f "%e" -o "$m.time" nice -n 5 "$bin" --model "$here/models/original-seed$s.onnx" \
			--forget "$here/forget/$set-seed$s.txt" --data "$here/work/fmnist6k.npz" --mean 0.2857 --std 0.3537 \
			--threads 1 --no-before -q --oracle "$here/models/oracle-$set-seed$s.onnx" \
			--out "$m.onnx" --metrics "$m.metrics.json" --overwrite "$@" >"$m.log" 2>&1 ||
			echo "explore.sh: $set seed $s failed: $(tail -3 "$m.log")" >&2
	done
done
/usr/bin/python3 "$here/explore_table.py" "$out"
