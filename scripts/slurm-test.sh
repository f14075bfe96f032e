#!/usr/bin/env bash
# `make test-slurm` (issue 46): a single-node Slurm cluster on this machine
# runs a small `unlearn score` audit as a job array through
# deploy/slurm/submit-score.sh (4 array tasks, then the gather job that
# depends on them), and the gathered score.json must equal a one-process
# run's (timings aside). Installs slurm-wlm, munge and jq if missing (needs
# root, as the cluster does: SlurmUser=root, no systemd, no cgroups). Every
# daemon it starts is stopped by its pid file, whatever the outcome; state,
# logs and results live in a mktemp folder, removed at the end unless
# KEEP=1 (or the test failed: then it is kept and named).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t0=$(date +%s)
say() { echo "slurm-test: $*"; }
fail() { echo "slurm-test: FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (slurmd runs jobs as root here; apt-get installs what is missing)"
need=()
command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null && command -v mungekey >/dev/null || need+=(munge)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
BIN=$repo/bin/unlearn
[ -x "$BIN" ] || fail "no $BIN (make build)"

scratch=$(mktemp -d /tmp/unlearn-slurm.XXXXXX)
chmod 0755 "$scratch" # munged runs as munge and must reach its folder
mkdir -p "$scratch"/{munge,state,spool,log,jobs}
chown munge:munge "$scratch/munge"
chmod 0755 "$scratch/munge" # clients (root here) need to reach its socket
host=$(hostname -s)
added_host=""
jobs=()
single_pid=""
ok=0

stop() { # stop the daemon whose pid file is $1, by that pid only
  local f=$1 pid i
  [ -s "$f" ] || return 0
  pid=$(cat "$f")
  kill "$pid" 2>/dev/null || return 0
  for i in $(seq 50); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  say "$(basename "$f" .pid) ($pid) still running after 10 s: SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  set +e
  [ -n "$single_pid" ] && kill "$single_pid" 2>/dev/null && wait "$single_pid" 2>/dev/null
  if [ ${#jobs[@]} -gt 0 ] && [ -s "$scratch/slurmctld.pid" ]; then
    scancel "${jobs[@]}" 2>/dev/null
    for _ in $(seq 30); do [ -z "$(squeue -h -j "$(IFS=,; echo "${jobs[*]}")" 2>/dev/null)" ] && break; sleep 1; done
  fi
  stop "$scratch/slurmd.pid"
  stop "$scratch/slurmctld.pid"
  stop "$scratch/munge/munged.pid"
  if [ -n "$added_host" ]; then
    sed -i "\|^$added_host\$|d" /etc/hosts && say "removed \"$added_host\" from /etc/hosts"
  fi
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$scratch"
  else
    say "logs, state and results kept in $scratch"
  fi
  say "took $(($(date +%s) - t0)) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The controller's host must resolve to this machine.
if ! getent hosts "$host" >/dev/null; then
  added_host="127.0.0.1 $host"
  echo "$added_host" >>/etc/hosts
  say "$host did not resolve: added \"$added_host\" to /etc/hosts (removed at the end)"
fi

# munge, as the munge user, with its own key and socket.
mungekey --create --keyfile="$scratch/munge/munge.key" --bits=1024 >/dev/null 2>&1 ||
  dd if=/dev/urandom of="$scratch/munge/munge.key" bs=128 count=1 status=none
chown munge:munge "$scratch/munge/munge.key"
chmod 0600 "$scratch/munge/munge.key"
runuser -u munge -- munged --key-file="$scratch/munge/munge.key" --socket="$scratch/munge/munge.socket" \
  --pid-file="$scratch/munge/munged.pid" --log-file="$scratch/munge/munged.log" --seed-file="$scratch/munge/munged.seed" ||
  { cat "$scratch/munge/munged.log" >&2 2>/dev/null; fail "munged did not start"; }

# Two free TCP ports for slurmctld and slurmd.
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  fail "no free port"
}
ctld_port=$(free_port)
slurmd_port=$(free_port)
[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((ctld_port + 1))

node=$(slurmd -C | head -1) # NodeName=<host> CPUs=... as slurmd sees this machine
export SLURM_CONF=$scratch/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=unlearntest
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$scratch/munge/munge.socket
StateSaveLocation=$scratch/state
SlurmdSpoolDir=$scratch/spool
SlurmctldPidFile=$scratch/slurmctld.pid
SlurmdPidFile=$scratch/slurmd.pid
SlurmctldLogFile=$scratch/log/slurmctld.log
SlurmdLogFile=$scratch/log/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
ReturnToService=2
MailProg=/bin/true
$node State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF" || fail "slurmctld did not start: $(tail -5 "$scratch/log/slurmctld.log")"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start: $(tail -5 "$scratch/log/slurmd.log")"
for i in $(seq 60); do
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  [ "$i" = 60 ] && fail "node $host is \"$state\" after 60 s: $(tail -5 "$scratch/log/slurmd.log")"
  sleep 1
done
say "cluster up in $(($(date +%s) - t0)) s (port $ctld_port/$slurmd_port): $(sinfo -h -o '%P %D node %N %T, %c CPUs')"

# The audit: K = 2 on the bundled demo (2 oracles, 2 unlearned models), as
# cheap as score allows.
audit=(--model "$repo/testdata/resnet_small_train.onnx" --data "$repo/testdata/fashion"
  --forget "$repo/testdata/demo/forget_nonIID.txt" --method finetune --epochs 1 --k 2 --train-epochs 1
  --retain-sample 200 --test-sample 200 --bootstrap 20)
# The one-process run, meanwhile (same settings).
"$BIN" score "${audit[@]}" --threads 1 --results "$scratch/single" >"$scratch/single.log" 2>&1 &
single_pid=$!
cd "$scratch/jobs"
out=$(UNLEARN=$BIN CPUS=1 "$repo/deploy/slurm/submit-score.sh" 4 "${audit[@]}" --results "$scratch/sharded")
echo "$out"
read -r array gather < <(sed -n 's/^array job \([0-9]*\) .* gather job \([0-9]*\) .*/\1 \2/p' <<<"$out") || true
[ -n "$array" ] && [ -n "$gather" ] || fail "submit-score.sh printed no job ids"
jobs=("$array" "$gather")
# Wait until every array task and the gather job is in a final state, as
# scontrol reports it. A query that fails (slurmctld busy on a loaded
# machine) counts as "not yet", never as "done": an empty squeue answer
# once ended this wait while the jobs still ran.
final='^(COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY|PREEMPTED|BOOT_FAIL|DEADLINE)$'
job_states() { # one "JobId ArrayTaskId JobState ExitCode" line per job or task, or nothing on error
  scontrol -o show job "$1" 2>/dev/null | sed -n 's/.*JobId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/\1 \2 \3/p'
}
for i in $(seq 300); do
  a=$(job_states "$array") g=$(job_states "$gather")
  if [ "$(grep -c . <<<"$a")" = 4 ] && [ -n "$g" ] &&
    ! awk -v re="$final" '$2 !~ re { bad = 1 } END { exit !bad }' <<<"$a"$'\n'"$g"; then
    break
  fi
  [ "$i" = 300 ] && fail "jobs not finished after 600 s: $(scontrol -o show job "$array" 2>&1; scontrol -o show job "$gather" 2>&1)"
  sleep 2
done
states=$(scontrol -o show job "$array" | sed -n 's/.*JobId=\([0-9]*\) .*ArrayTaskId=\([0-9]*\) .*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/task \2: \3 \4/p' | sort)
gstate=$(scontrol -o show job "$gather" | sed -n 's/.*JobState=\([A-Z_]*\) .*ExitCode=\([0-9:]*\).*/\1 \2/p')
echo "$states" | sed 's/^/  array /'
echo "  gather: $gstate"
if [ "$(grep -c ': COMPLETED 0:0' <<<"$states")" != 4 ] || [ "$gstate" != "COMPLETED 0:0" ]; then
  # The job logs first, then the states and the controller's last words, so
  # that a log's tail (all CI keeps) ends with the cause.
  tail -n 20 "$scratch"/jobs/*.out >&2
  tail -n 15 "$scratch/log/slurmctld.log" | sed 's/^/  slurmctld: /' >&2
  echo "$states" | sed 's/^/  array /' >&2
  echo "  gather: $gstate" >&2
  fail "array tasks or gather did not complete"
fi
say "array and gather done in $(($(date +%s) - t0)) s"
wait "$single_pid" || { cat "$scratch/single.log" >&2; single_pid=""; fail "one-process run failed"; }
single_pid=""
strip='walk(if type == "object" then del(.timings) else . end)'
if ! diff <(jq -S "$strip" "$scratch/sharded/score.json") <(jq -S "$strip" "$scratch/single/score.json") >"$scratch/score.diff"; then
  head -40 "$scratch/score.diff" >&2
  fail "the gathered score differs from the one-process score (diff in $scratch/score.diff)"
fi
fields='"forget quality \(.forget_quality.estimate), final score \(.final_score.estimate // "none"), forget KLoM \(.klom.forget.estimate)"'
say "gathered score.json equals the one-process run's (timings aside): $(jq -r "$fields" "$scratch/sharded/score.json")"
grep -h '^unlearn-score:' "$scratch"/jobs/unlearn-score-*_*.out | sort | sed 's/^/  /'
tail -n 2 "$scratch"/jobs/unlearn-score-gather-*.out | sed 's/^/  gather: /'
ok=1
say PASS
