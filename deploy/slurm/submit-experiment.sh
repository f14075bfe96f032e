#!/bin/bash
# Submits an `unlearn experiment` grid to Slurm: SHARDS array tasks
# (experiment-array.sbatch), then the report job (experiment-report.sbatch)
# that runs when every array task has succeeded. Prints the two job ids.
#
#   deploy/slurm/submit-experiment.sh SHARDS CONFIG [unlearn experiment flags]
#
# Environment as submit-score.sh's: CPUS (--cpus-per-task; set the config's
# threads: to it), ARRAY, UNLEARN, SBATCH_PARTITION and the other sbatch
# input variables, SBATCH_ARGS. Resubmitting after a failure reruns only
# what is missing: every step with a record is skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ] || ! [[ $1 =~ ^[1-9][0-9]*$ ]]; then
  echo "usage: $0 SHARDS CONFIG [unlearn experiment flags]" >&2
  exit 2
fi
shards=$1 config=$2
shift 2
. "$here/find-unlearn.sh"
# SBATCH_ARGS is split on white space but not expanded as file names: an
# unquoted $SBATCH_ARGS would turn "--comment=*" into the working folder's
# file names. read -a splits without globbing.
read -r -a extra <<<"${SBATCH_ARGS:-}"
array=$(sbatch --parsable "${extra[@]}" --array="${ARRAY:-0-$((shards - 1))}" --cpus-per-task="${CPUS:-1}" \
  "$here/experiment-array.sbatch" --config "$config" --shards "$shards" "$@")
array=${array%%;*}
report=$(sbatch --parsable "${extra[@]}" --dependency=afterok:"$array" --kill-on-invalid-dep=yes \
  "$here/experiment-report.sbatch" --config "$config" "$@")
report=${report%%;*}
echo "array job $array ($shards shards, tasks ${ARRAY:-0-$((shards - 1))}), report job $report (after every array task succeeds)"
