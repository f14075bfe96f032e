#!/bin/bash
# The resnet18-memorize regime's background driver (issue 63, item 1a): trains
# every missing original and oracle with train.py, one model at a time, niced
# and pinned to one core with one thread, and commits each model's sidecar
# (models/*.json) as soon as it is written, so that a stopped session loses
# at most the model in training (which resumes from its epoch checkpoint in
# ~/.cache/unlearn-resnet18-memorize). With `rows` it then runs the
# experiment (regimes/resnet18-memorize.yaml), committing results.jsonl every
# ten minutes and RESULTS.md with the plots at the end.
#
#   nohup regimes/resnet18-memorize/run.sh [models|rows|all] [SEED ...] > LOG 2>&1 &
#
# Defaults: `models`, seeds 0 1 2. CORE (1) picks the core, REPO the work
# tree (this file's), UNLEARN the tool (bin/unlearn, else /work/main/bin/unlearn).
# Safe to start again after a stop: finished models are skipped.
set -u
REPO=${REPO:-$(cd "$(dirname "$0")/../.." && pwd)}
CORE=${CORE:-1}
PY=/usr/bin/python3
T=regimes/resnet18-memorize/train.py
cd "$REPO" || exit 1
phase=${1:-models}
shift || true
seeds=${*:-0 1 2}
run() { taskset -c "$CORE" nice -n 19 "$@"; }

# git commit of the named paths only (other staged work is left alone),
# retried while another commit holds the index lock.
commit() {
	local msg=$1
	shift
	for _ in $(seq 30); do
		if git add -- "$@" 2>/dev/null && git commit -q -m "$msg" -- "$@"; then
			return 0
		fi
		if git diff --quiet HEAD -- "$@" 2>/dev/null && [ -z "$(git status --porcelain -- "$@")" ]; then
			return 0 # nothing to commit
		fi
		sleep 10
	done
	echo "run.sh: could not commit $*" >&2
}

# The epochs the recipe may take, in order: seed S's original must fit at
# least 99 % of its training split (the regime's premise); where one does
# not, the driver moves RECIPE (train.py) and the experiment's `train:` and
# `Retrain (tool)` epochs (regimes/resnet18-memorize.yaml) to the next rung,
# commits that, and starts again (models of the old recipe then train again).
EPOCH_LADDER=${EPOCH_LADDER:-15 25 40}
YAML=regimes/resnet18-memorize.yaml

recipe_epochs() { $PY -c "import re,sys; print(re.search(r'^RECIPE = dict\(epochs=(\d+)', open(sys.argv[1]).read(), re.M).group(1))" $T; }

set_epochs() {
	sed -i -E "s/^(RECIPE = dict\(epochs=)[0-9]+/\1$1/" $T
	sed -i -E "s/(train: \{epochs: )[0-9]+/\1$1/; s/(method: retrain, epochs: )[0-9]+/\1$1/; s/(batch 32, )[0-9]+( epochs)/\1$1\2/" $YAML
}

train_one() { # name side args...
	local name=$1 side=$2
	shift 2
	echo "$(date -u +%FT%TZ) $name: start"
	run $PY $T train "$@" --threads 1 || { echo "$name: train.py failed" >&2; exit 1; }
	if [ -f "$side" ] && [ -n "$(git status --porcelain -- "$side")" ]; then
		summary=$($PY -c "import json,sys; m=json.load(open(sys.argv[1])); f=m['final']; fa=m['forget_accuracy']; print('%d epochs: train %.2f %%, test %.2f %%, forget %s, %.0f s' % (m['recipe']['epochs'], 100*f['train_accuracy'], 100*f['test_accuracy'], ', '.join('%s %.2f %%' % (k, 100*v) for k, v in fa.items()), m['train_s']))" "$side")
		commit "resnet18-memorize: $name trained ($summary), its sidecar" "$side"
	fi
	echo "$(date -u +%FT%TZ) $name: done"
}

models() {
	[ -f regimes/resnet18-memorize/work/fmnist32-2500.npz ] || run $PY $T data || exit 1
	for s in $seeds; do
		for f in "" iid non-iid; do
			if [ -z "$f" ]; then name=original-seed$s; args=(--seed "$s"); else name=oracle-$f-seed$s; args=(--seed "$s" --forget "$f"); fi
			side=regimes/resnet18-memorize/models/$name.json
			train_one "$name" "$side" "${args[@]}"
			[ -n "$f" ] && continue
			acc=$($PY -c "import json,sys; print(json.load(open(sys.argv[1]))['final']['train_accuracy'])" "$side")
			if $PY -c "import sys; sys.exit(float(sys.argv[1]) < 0.99)" "$acc"; then
				continue
			fi
			cur=$(recipe_epochs)
			next=""
			for e in $EPOCH_LADDER; do
				if [ "$e" -gt "$cur" ]; then next=$e; break; fi
			done
			if [ -z "$next" ]; then
				echo "run.sh: $name fits only $acc of its training split (< 0.99) at $cur epochs, the ladder's last ($EPOCH_LADDER): the recipe does not memorize; change it in train.py and the yaml" >&2
				exit 3
			fi
			echo "run.sh: $name fits only $acc of its training split (< 0.99) at $cur epochs: the recipe moves to $next epochs and every model trains again"
			set_epochs "$next"
			commit "resnet18-memorize: $cur epochs fit $name's training split only to $acc (< 0.99), so the recipe (train.py, the yaml's train and Retrain (tool)) moves to $next epochs" $T $YAML
			exec "$0" "$phase" $seeds
		done
	done
}

rows() {
	local tool=${UNLEARN:-bin/unlearn}
	[ -x "$tool" ] || tool=/work/main/bin/unlearn
	export ONNXRUNTIME_LIB=${ONNXRUNTIME_LIB:-/work/main/.ort/libonnxruntime.so.1}
	local out=regimes/resnet18-memorize
	run "$tool" experiment --config regimes/resnet18-memorize.yaml &
	local pid=$!
	while kill -0 $pid 2>/dev/null; do
		sleep 600
		[ -f $out/results.jsonl ] && commit "resnet18-memorize: the experiment's records so far" $out/results.jsonl
	done
	wait $pid
	local rc=$?
	"$tool" experiment --config regimes/resnet18-memorize.yaml --report-only
	commit "resnet18-memorize: the experiment's records, RESULTS.md and plots (experiment exit $rc)" \
		$out/results.jsonl $out/RESULTS.md $(ls $out/*.png 2>/dev/null)
}

case $phase in
models) models ;;
rows) rows ;;
all) models && rows ;;
*) echo "usage: run.sh [models|rows|all] [SEED ...]" >&2; exit 2 ;;
esac
