#!/bin/bash
# Submits an `unlearn score` audit to Slurm: SHARDS array tasks
# (score-array.sbatch), then the gather job (score-gather.sbatch) that runs
# when every array task has succeeded (--dependency=afterok). Prints the two
# job ids.
#
#   deploy/slurm/submit-score.sh SHARDS [unlearn score flags, --results included]
#
# Environment: CPUS (--cpus-per-task = --threads of each array task,
# default 1); ARRAY (the array tasks to submit, default 0-(SHARDS-1); e.g.
# ARRAY=3 to rerun shard 3 alone); UNLEARN (the binary, default: unlearn on
# the PATH, else this repository's bin/unlearn); UNLEARN_RESULTS (the shared
# results folder, instead of --results); any sbatch input variable, e.g.
# SBATCH_PARTITION, SBATCH_TIMELIMIT, SBATCH_ACCOUNT. Other sbatch options:
# SBATCH_ARGS, split on spaces (e.g. SBATCH_ARGS="--mem-per-cpu=2G").
# Resubmitting the same command after a failure reruns only what is
# missing: every task whose result is in the folder is skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 1 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 SHARDS [unlearn score flags]" >&2
  exit 2
fi
shards=$1
shift
. "$here/find-unlearn.sh"
# SBATCH_ARGS is split on white space but not expanded as file names: an
# unquoted $SBATCH_ARGS would turn "--comment=*" into the working folder's
# file names. read -a splits without globbing.
read -r -a extra <<<"${SBATCH_ARGS:-}"
array=$(sbatch --parsable "${extra[@]}" --array="${ARRAY:-0-$((shards - 1))}" --cpus-per-task="${CPUS:-1}" \
  "$here/score-array.sbatch" --shards "$shards" "$@")
array=${array%%;*} # --parsable prints "id" or "id;cluster"
gather=$(sbatch --parsable "${extra[@]}" --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
  "$here/score-gather.sbatch" "$@")
gather=${gather%%;*}
echo "array job $array ($shards shards, tasks ${ARRAY:-0-$((shards - 1))}), gather job $gather (after every array task succeeds)"
