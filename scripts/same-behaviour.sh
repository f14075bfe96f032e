#!/usr/bin/env bash
# Behaviour unchanged against BASE_REV: builds bin/unlearn at BASE_REV (in a
# temporary git worktree) and from this work tree, and runs both on the same
# inputs, a copy of HEAD's committed tree for each (git archive), so that
# only the binary differs:
#   - the demo (scripts/demo.sh): the unlearned model's sha256 must be equal,
#     and metrics.json must be equal once its timing fields are removed
#     (timings, *_s, seconds, speedup, epochs_equivalent, the timed retrain
#     steps, peak memory, the tool's name and version; seconds quoted in
#     notes are masked, and the note that retraining would be cheaper is
#     dropped: it is there or not by the run's seconds against the timed
#     retraining steps');
#   - every regime whose RESULTS.md is committed and whose experiment file
#     (regimes/*.yaml, out: regimes/NAME) exists: `unlearn experiment
#     --config regimes/NAME.yaml --report-only` must rebuild RESULTS.md byte
#     for byte with both binaries. Report-only trains nothing: a fresh tree
#     has no models or caches, and the records and sidecars suffice.
# Prints a table (check, base, head, same?) and exits 1 if anything differs.
# Needs ONNX Runtime (ONNXRUNTIME_LIB, else .ort/ of this checkout), Go, jq.
#
#   scripts/same-behaviour.sh BASE_REV
set -euo pipefail
if [ $# -ne 1 ]; then
	echo "usage: $0 BASE_REV" >&2
	exit 2
fi
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"
base=$(git rev-parse --verify "$1^{commit}")
export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-$root/.ort/libonnxruntime.so.1}
if [ ! -e "$ONNXRUNTIME_LIB" ]; then
	echo "$0: no ONNX Runtime at $ONNXRUNTIME_LIB: set ONNXRUNTIME_LIB (make ort fetches it)" >&2
	exit 2
fi
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }

tmp=$(mktemp -d /tmp/same-behaviour.XXXXXX)
cleanup() {
	git worktree remove --force "$tmp/src-base" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "building base ($base) and head (work tree at $(git rev-parse --short HEAD))" >&2
git worktree add --quiet --detach "$tmp/src-base" "$base"
(cd "$tmp/src-base" && go build -o "$tmp/unlearn-base" ./cmd/unlearn)
go build -o "$tmp/unlearn-head" ./cmd/unlearn

# The regimes to check: a committed RESULTS.md and an experiment file whose
# out: is its folder.
regimes=()
skipped=()
for r in $(git ls-files 'regimes/*/RESULTS.md'); do
	dir=$(dirname "$r")
	cfg=$(grep -l -x "out: *$dir *" regimes/*.yaml 2>/dev/null | head -n 1 || true)
	if [ -n "$cfg" ]; then
		regimes+=("$cfg")
	else
		skipped+=("$dir")
	fi
done

# metrics.json less what timing decides (docs/FORMATS.md, schema/).
normalize() {
	jq -S 'walk(
		if type == "array" then
			map(select((type == "string" and test("retraining (is|may be) cheaper here")) | not))
		elif type == "object" then
			with_entries(select(.key | test("^(timings|tool|seconds|Seconds|fit_seconds|speedup|epochs_equivalent|retrain_steps_timed|peak_rss_mib)$|_s$") | not))
		elif type == "string" then
			gsub("[0-9]+(\\.[0-9]+)? ?s\\b"; "<t> s")
		else . end)' "$1"
}

for side in base head; do
	dir="$tmp/$side"
	mkdir -p "$dir/bin"
	git archive HEAD | tar -x -C "$dir"
	cp "$tmp/unlearn-$side" "$dir/bin/unlearn"
	echo "$side: demo" >&2
	if (cd "$dir" && bash scripts/demo.sh >"$tmp/$side-demo.log" 2>&1); then
		sha256sum <"$dir/out/demo/unlearned.onnx" | cut -c1-64 >"$tmp/$side-model"
		normalize "$dir/out/demo/metrics.json" >"$tmp/$side-metrics"
	else
		echo "$side: demo failed (log: last lines below)" >&2
		tail -n 5 "$tmp/$side-demo.log" >&2
		echo "failed" >"$tmp/$side-model"
		echo "failed" >"$tmp/$side-metrics"
	fi
	for cfg in "${regimes[@]}"; do
		name=$(basename "$cfg" .yaml)
		echo "$side: report-only $cfg" >&2
		if (cd "$dir" && bin/unlearn experiment --config "$cfg" --report-only >/dev/null 2>"$tmp/$side-$name.log"); then
			cp "$dir/regimes/$name/RESULTS.md" "$tmp/$side-$name.md"
		else
			echo "$side: $cfg failed: $(tail -n 1 "$tmp/$side-$name.log")" >&2
			echo "failed" >"$tmp/$side-$name.md"
		fi
	done
done

status=0
row() { printf '%-44s %-16s %-16s %s\n' "$@"; }
same() { # same FILE_BASE FILE_HEAD: sets res to yes when both ran and are equal
	res=yes
	if grep -qx failed "$1" || grep -qx failed "$2" || ! cmp -s "$1" "$2"; then
		res=NO
		status=1
	fi
}
short() { if grep -qx failed "$1"; then echo failed; else sha256sum <"$1" | cut -c1-12; fi; }
verdict() { # verdict REBUILT COMMITTED
	if grep -qx failed "$1"; then echo failed; elif cmp -s "$1" "$2"; then echo "= committed"; else echo differs; fi
}
echo
row "check" "base" "head" "same?"
same "$tmp/base-model" "$tmp/head-model"
row "demo: model sha256" "$(cut -c1-12 "$tmp/base-model")" "$(cut -c1-12 "$tmp/head-model")" "$res"
same "$tmp/base-metrics" "$tmp/head-metrics"
row "demo: metrics.json less timings (sha256)" "$(short "$tmp/base-metrics")" "$(short "$tmp/head-metrics")" "$res"
for cfg in "${regimes[@]}"; do
	name=$(basename "$cfg" .yaml)
	git show "HEAD:regimes/$name/RESULTS.md" >"$tmp/committed-$name.md"
	b=$(verdict "$tmp/base-$name.md" "$tmp/committed-$name.md")
	h=$(verdict "$tmp/head-$name.md" "$tmp/committed-$name.md")
	same "$tmp/base-$name.md" "$tmp/head-$name.md"
	[ "$h" = "= committed" ] || { res="$res (head differs from the committed file)"; status=1; }
	row "RESULTS.md $name" "$b" "$h" "$res"
done
for dir in "${skipped[@]}"; do
	row "RESULTS.md $(basename "$dir")" "no config" "no config" "not checked (no regimes/*.yaml with out: $dir)"
done
if ! cmp -s "$tmp/base-metrics" "$tmp/head-metrics"; then
	echo
	echo "metrics.json less timings, base → head:"
	diff "$tmp/base-metrics" "$tmp/head-metrics" | head -n 40 || true
fi
exit $status
