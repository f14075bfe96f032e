#!/usr/bin/env bash
# `make test-k8s` (issue 67): a one-node Kubernetes cluster on this machine
# runs deploy/k8s through the test overlay deploy/k8s-test: the claim (bound
# to a static hostPath volume), the score Indexed Job (a K = 2 audit as 4
# shards) and the experiment Indexed Job (two seeds as 2 shards), then the
# gather Job; the gathered score.json must equal a one-process run's
# (timings and input paths aside), and the experiment's shards must have
# written every seed's records. The namespace enforces the "restricted" Pod
# Security Standard, and a pod that runs as root must be refused there by
# the API server (and admitted, in a dry run, in a namespace without it).
#
# The cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler
# and a kubelet, built from release sources by scripts/k8s-build.sh (cached
# outside the checkout); Debian's containerd, runc and CNI plugins (installed
# if missing; needs root); a pause image built here (scripts/k8s-pause.go)
# and the tool's image built by scripts/docker-test.sh --save, both imported
# into containerd: nothing is pulled from a registry. The daemons run as root
# on the loopback address, with their state, certificates (made by
# scripts/k8s-setup.go) and logs in a mktemp folder; every pod runs as uid
# 10001. Pods get a network namespace on a bridge with no address on the
# host and no route out (they need no network). Every daemon is stopped by
# its pid whatever the outcome, the pods' containers first, and the end
# checks that no process naming the folder is left; the folder is removed
# unless KEEP=1 (or the test failed: then it is kept and named).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t0=$(date +%s)
say() { echo "k8s-test: $*"; }
fail() { echo "k8s-test: FAIL: $*" >&2; exit 1; }
elapsed() { echo "$(($(date +%s) - t0)) s"; }

[ "$(id -u)" = 0 ] || fail "needs root (containerd and the kubelet; apt-get installs what is missing)"
need=()
command -v containerd >/dev/null && command -v ctr >/dev/null || need+=(containerd)
command -v runc >/dev/null || need+=(runc)
[ -x /usr/lib/cni/bridge ] && [ -x /usr/lib/cni/host-local ] && [ -x /usr/lib/cni/loopback ] ||
  need+=(containernetworking-plugins)
command -v jq >/dev/null || need+=(jq)
command -v ip >/dev/null || need+=(iproute2)
[ ${#need[@]} -eq 0 ] || CALLER=k8s-test ./scripts/apt-install.sh "${need[@]}"
BIN=$repo/bin/unlearn
[ -x "$BIN" ] || fail "no $BIN (make build)"

say "cluster binaries (scripts/k8s-build.sh: built once, then cached)"
cache=$(./scripts/k8s-build.sh | tail -1)
kbin=$cache/bin
say "binaries ready at $(elapsed): $(cat "$kbin/BUILT")"

scratch=$(mktemp -d /tmp/unlearn-k8s.XXXXXX)
chmod 0755 "$scratch"
mkdir -p "$scratch"/{log,pki,cni,ipam,kubelet,pod-logs,containerd}
node=unlearn-k8s-node
bridge=unlearn0
cgroot=unlearn-k8s-test # the pods' cgroups live under /<this> in each hierarchy
sock=$scratch/containerd.sock
export KUBECONFIG=$scratch/pki/admin.kubeconfig
kubectl=$kbin/kubectl
ok=0
single_pid=""
pids=() # "name:pid" of each daemon, in start order

pid_of() { local e; for e in "${pids[@]}"; do [ "${e%%:*}" = "$1" ] && echo "${e#*:}"; done; }
stop_pid() { # stop one process by its pid: TERM, then KILL after 15 s
  local name=$1 pid=$2
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 75); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  say "$name ($pid) still running after 15 s: SIGKILL"
  kill -9 "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$? i e left
  set +e
  [ -n "$single_pid" ] && kill "$single_pid" 2>/dev/null && wait "$single_pid" 2>/dev/null
  # The pods first, through the API (the kubelet stops their containers),
  # while every daemon still runs.
  if [ -n "$(pid_of kubelet)" ] && [ -n "$(pid_of kube-apiserver)" ]; then
    timeout 90 "$kubectl" delete namespace unlearn-test --ignore-not-found --wait=true >/dev/null 2>&1 ||
      say "the namespace was not gone in 90 s"
  fi
  # The control plane and the kubelet, last started first stopped.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    e=${pids[i]}
    [ "${e%%:*}" = containerd ] && continue
    stop_pid "${e%%:*}" "${e#*:}"
  done
  # Any container left (a pod the kubelet did not stop), then containerd,
  # then the runc shims of this containerd (they outlive it by design).
  if [ -n "$(pid_of containerd)" ]; then
    for c in $(ctr --address "$sock" -n k8s.io tasks ls -q 2>/dev/null); do
      ctr --address "$sock" -n k8s.io tasks kill -s SIGKILL "$c" >/dev/null 2>&1
      ctr --address "$sock" -n k8s.io tasks delete -f "$c" >/dev/null 2>&1
    done
    stop_pid containerd "$(pid_of containerd)"
  fi
  for p in $(pgrep -f -- "-address $sock" 2>/dev/null); do stop_pid containerd-shim "$p"; done
  # What the daemons may leave on the host: mounts under the folder (the
  # kubelet's rshared bind mount of its root, containers' root file systems,
  # shm and network namespaces), the pods' cgroups, the bridge, and the
  # kubelet's log links.
  findmnt -rn -o TARGET | grep "^$scratch/" | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h$cgroot" ] && find "$h$cgroot" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  ip link delete "$bridge" 2>/dev/null
  find /var/log/containers -maxdepth 1 -lname "$scratch/*" -delete 2>/dev/null
  # Folders the kubelet, containerd and the CNI plugins make at fixed paths,
  # removed where this run made them, with the sockets left in them (the
  # kubelet's device-plugin socket), if nothing else is there.
  for d in "${made[@]}"; do
    [ -d "$d" ] && find "$d" -depth \( -type s -o -type d -empty \) -delete 2>/dev/null
  done
  # No process may be left that was started here: the daemons and shims
  # name the folder, the pods' processes are in the pods' cgroups.
  left=$(pgrep -a -f -- "$scratch/" 2>/dev/null)
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h$cgroot" ] || continue
    left+=$(find "$h$cgroot" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | xargs -r ps -o pid=,args= -p)
    [ -d "$h$cgroot" ] && say "cgroup $h$cgroot could not be removed"
  done
  if [ -n "$left" ]; then
    echo "$left" | sed 's/^/  left running: /' >&2
    say "FAIL: processes started here are still running"
    ok=0
    [ "$rc" = 0 ] && rc=1
  else
    say "no daemon left running (pgrep -f $scratch/: none)"
  fi
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$scratch"
  else
    say "logs, state and results kept in $scratch"
  fi
  say "took $(elapsed)"
  exit "$rc"
}
made=()
for d in /var/log/containers /var/lib/kubelet /var/lib/cni /run/containerd; do [ -e "$d" ] || made+=("$d"); done
trap cleanup EXIT
trap 'exit 130' INT TERM

start() { # start NAME LOGFILE CMD...: a daemon in the background, its pid kept
  local name=$1 log=$2
  shift 2
  "$@" >"$log" 2>&1 &
  pids+=("$name:$!")
}
alive() { kill -0 "$(pid_of "$1")" 2>/dev/null || fail "$1 exited: $(tail -5 "$scratch/log/$1.log")"; }
wait_for() { # wait_for WHAT SECONDS DAEMON CMD...: until CMD succeeds
  local what=$1 n=$2 d=$3 i
  shift 3
  for ((i = 0; i < n * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    [ "$d" = - ] || alive "$d"
    sleep 0.5
  done
  fail "$what not ready after $n s"
}
free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 20000))
    [[ " ${ports[*]:-} " == *" $p "* ]] && continue
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
  done
  fail "no free port"
}
ports=()
etcd_port=$(free_port); ports+=("$etcd_port")
peer_port=$(free_port); ports+=("$peer_port")
api_port=$(free_port); ports+=("$api_port")
kcm_port=$(free_port); ports+=("$kcm_port")
sched_port=$(free_port); ports+=("$sched_port")
kubelet_port=$(free_port); ports+=("$kubelet_port")
healthz_port=$(free_port); ports+=("$healthz_port")

# The tool's image (docker-test.sh starts and stops its own dockerd), and
# the pause image.
say "building the tool's image (scripts/docker-test.sh --save)"
./scripts/docker-test.sh --save "$scratch/unlearn-image.tar" >"$scratch/log/docker.log" 2>&1 ||
  fail "the image: $(tail -5 "$scratch/log/docker.log")"
(CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$scratch/pause" scripts/k8s-pause.go &&
  go run scripts/k8s-setup.go image "$scratch/pause" "$scratch/pause-image.tar" unlearn.test/pause:1 &&
  go run scripts/k8s-setup.go pki "$scratch/pki" "$node" "https://127.0.0.1:$api_port") ||
  fail "the pause image or the certificates"
say "images and certificates made at $(elapsed)"

# containerd: its own root, state and socket; CRI with the local pause
# image, runc with cgroupfs (no systemd here), CNI from this folder. Where
# root lacks CAP_SYS_RESOURCE (some sandboxed VMs), no process may lower its
# OOM score, which the kubelet asks for every pod's pause container (-998):
# restrict_oom_score_adj then raises such scores to containerd's own.
restrict_oom=false
capeff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
if ((((0x$capeff >> 24) & 1) == 0)); then
  restrict_oom=true
  say "root lacks CAP_SYS_RESOURCE here: containerd's restrict_oom_score_adj is on"
fi
cat >"$scratch/containerd.toml" <<EOF
version = 2
root = "$scratch/containerd/root"
state = "$scratch/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
[grpc]
  address = "$sock"
[ttrpc]
  address = "$sock.ttrpc"
[plugins."io.containerd.internal.v1.opt"]
  path = "$scratch/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "unlearn.test/pause:1"
  netns_mounts_under_state_dir = true
  restrict_oom_score_adj = $restrict_oom
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        BinaryName = "$(command -v runc)"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$scratch/cni"
EOF
cat >"$scratch/cni/10-unlearn.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "unlearn-test", "plugins": [
  {"type": "bridge", "bridge": "$bridge", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "10.250.0.0/24"}]], "dataDir": "$scratch/ipam"}}]}
EOF
start containerd "$scratch/log/containerd.log" containerd --config "$scratch/containerd.toml"
wait_for containerd 30 containerd ctr --address "$sock" version
ctr --address "$sock" -n k8s.io images import "$scratch/pause-image.tar" >/dev/null ||
  fail "importing the pause image"
ctr --address "$sock" -n k8s.io images import "$scratch/unlearn-image.tar" >/dev/null ||
  fail "importing the tool's image"
say "containerd $(containerd --version | awk '{print $3}') up, images imported at $(elapsed):" \
  "$(ctr --address "$sock" -n k8s.io images ls -q | grep -v '^sha256:' | tr '\n' ' ')"

# etcd and the control plane, on 127.0.0.1 only.
start etcd "$scratch/log/etcd.log" "$kbin/etcd" --name unlearn --data-dir "$scratch/etcd" \
  --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
  --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
  --initial-cluster "unlearn=http://127.0.0.1:$peer_port" --log-level warn
pki=$scratch/pki
start kube-apiserver "$scratch/log/kube-apiserver.log" "$kbin/kube-apiserver" \
  --etcd-servers "http://127.0.0.1:$etcd_port" --bind-address 127.0.0.1 --advertise-address 127.0.0.1 \
  --secure-port "$api_port" --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
  --client-ca-file "$pki/ca.crt" --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
  --service-account-issuer "https://127.0.0.1:$api_port" --service-account-key-file "$pki/sa.pub" \
  --service-account-signing-key-file "$pki/sa.key" --service-cluster-ip-range 10.251.0.0/24 \
  --endpoint-reconciler-type none --cert-dir "$scratch/apiserver" --profiling=false
wait_for kube-apiserver 120 kube-apiserver "$kubectl" get --raw /readyz
say "kube-apiserver $("$kubectl" version -o json | jq -r .serverVersion.gitVersion) ready at $(elapsed)"
start kube-controller-manager "$scratch/log/kube-controller-manager.log" "$kbin/kube-controller-manager" \
  --kubeconfig "$pki/controller-manager.kubeconfig" --authentication-kubeconfig "$pki/controller-manager.kubeconfig" \
  --authorization-kubeconfig "$pki/controller-manager.kubeconfig" --bind-address 127.0.0.1 --secure-port "$kcm_port" \
  --leader-elect=false --use-service-account-credentials --service-account-private-key-file "$pki/sa.key" \
  --root-ca-file "$pki/ca.crt" --cert-dir "$scratch/kcm" --profiling=false
start kube-scheduler "$scratch/log/kube-scheduler.log" "$kbin/kube-scheduler" \
  --kubeconfig "$pki/scheduler.kubeconfig" --authentication-kubeconfig "$pki/scheduler.kubeconfig" \
  --authorization-kubeconfig "$pki/scheduler.kubeconfig" --bind-address 127.0.0.1 --secure-port "$sched_port" \
  --leader-elect=false --cert-dir "$scratch/scheduler" --profiling=false

# The kubelet: the pods' cgroups under /$cgroot (made here, removed at the
# end), no iptables chains, eviction only when the disk or memory is nearly
# full (the machine is shared), pod logs in this folder.
for h in /sys/fs/cgroup/*/; do
  case $h in */unified/) continue ;; esac
  mkdir -p "$h$cgroot"
  if [ -f "$h/cpuset.cpus" ]; then
    cat "$h/cpuset.cpus" >"$h$cgroot/cpuset.cpus"
    cat "$h/cpuset.mems" >"$h$cgroot/cpuset.mems"
  fi
done
cat >"$scratch/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $kubelet_port
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $healthz_port
tlsCertFile: $pki/kubelet-serving.crt
tlsPrivateKeyFile: $pki/kubelet-serving.key
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $pki/ca.crt}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$sock
cgroupDriver: cgroupfs
cgroupRoot: /$cgroot
failSwapOn: false
makeIPTablesUtilChains: false
podLogsDir: $scratch/pod-logs
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%, nodefs.inodesFree: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
registerNode: true
EOF
start kubelet "$scratch/log/kubelet.log" "$kbin/kubelet" --config "$scratch/kubelet.yaml" \
  --kubeconfig "$pki/kubelet.kubeconfig" --root-dir "$scratch/kubelet" --cert-dir "$scratch/kubelet/pki" \
  --hostname-override "$node"
wait_for "node $node" 180 kubelet "$kubectl" wait --for=condition=Ready "node/$node" --timeout=1s
say "node $node Ready at $(elapsed): $("$kubectl" get node "$node" -o jsonpath='{.status.nodeInfo.kubeletVersion}, {.status.nodeInfo.containerRuntimeVersion}, {.status.allocatable.cpu} CPUs')"

# The results volume: a static hostPath PersistentVolume (no provisioner)
# holding inputs/ as the Jobs expect it, writable by the pods' uid only.
vol=$scratch/volume
mkdir -p "$vol/inputs/data"
cp testdata/resnet_small_train.onnx "$vol/inputs/model.onnx"
cp testdata/demo/forget_nonIID.txt "$vol/inputs/forget.txt"
cp testdata/fashion/* "$vol/inputs/data/"
cat >"$vol/inputs/experiment.yaml" <<EOF
# make test-k8s: two seeds of a one-epoch grid, one per shard (relative
# paths resolve in /results, the Job's working directory).
architecture: inputs/model.onnx
data: inputs/data
train: {epochs: 1, lr: 0.05}
forget_sets: [{name: iid, kind: iid, fraction: 0.1}]
seeds: [0, 1]
threads: 1
no_mia: true
out: experiment
methods:
  - {name: SSD, method: ssd}
EOF
chmod -R a+rX "$vol/inputs"
chown 10001:10001 "$vol"
chmod 0755 "$vol"
"$kubectl" apply -f - >/dev/null <<EOF
apiVersion: v1
kind: PersistentVolume
metadata:
  name: unlearn-test-results
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteMany]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: unlearn-test-hostpath
  claimRef: {namespace: unlearn-test, name: unlearn-results}
  hostPath: {path: $vol, type: Directory}
EOF

# The one-process run of the same audit, meanwhile.
audit=(--model "$repo/testdata/resnet_small_train.onnx" --data "$repo/testdata/fashion"
  --forget "$repo/testdata/demo/forget_nonIID.txt" --method finetune --epochs 1 --k 2 --train-epochs 1
  --retain-sample 200 --test-sample 200 --bootstrap 20 --threads 1)
nice "$BIN" score "${audit[@]}" --results "$scratch/single" >"$scratch/log/single.log" 2>&1 &
single_pid=$!

say "kubectl apply -k deploy/k8s-test"
"$kubectl" apply -k deploy/k8s-test | sed 's/^/  /'
ns=(-n unlearn-test)
bound() { [ "$("$kubectl" "${ns[@]}" get pvc unlearn-results -o jsonpath='{.status.phase}')" = Bound ]; }
wait_for "the claim's binding" 60 - bound

# The negative control: a pod that runs as root (and sets none of the
# restricted settings) is refused in this namespace by the API server, and
# admitted (a server-side dry run) in one without the label.
root_pod='{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "runs-as-root"},
  "spec": {"containers": [{"name": "c", "image": "docker.io/library/unlearn:test", "imagePullPolicy": "Never",
  "securityContext": {"runAsUser": 0}}]}}'
if out=$("$kubectl" "${ns[@]}" apply -f - <<<"$root_pod" 2>&1); then
  fail "a pod running as root was admitted in the restricted namespace: $out"
fi
grep -q 'violates PodSecurity "restricted:latest"' <<<"$out" || fail "the root pod was refused, not by PodSecurity: $out"
say "refused, as it must be: ${out#Error from server (Forbidden): }"
"$kubectl" -n default apply --dry-run=server -f - <<<"$root_pod" >/dev/null ||
  fail "the same pod is refused in the default namespace too: the control shows nothing"
say "the same pod is admitted (server-side dry run) in the default namespace, which has no Pod Security label"

wait_job() { # wait_job NAME SECONDS: until the Job completes; fail if it fails
  local name=$1 n=$2 i conds
  for ((i = 0; i < n; i += 2)); do
    conds=$("$kubectl" "${ns[@]}" get job "$name" -o jsonpath='{range .status.conditions[?(@.status=="True")]}{.type} {end}')
    case " $conds " in
      *" Complete "*) return 0 ;;
      *" Failed "*)
        "$kubectl" "${ns[@]}" get pods -o wide >&2
        tail -n 20 "$scratch"/pod-logs/unlearn-test_"$name"-*/*/*.log >&2 2>/dev/null
        fail "Job $name failed: $("$kubectl" "${ns[@]}" get job "$name" -o jsonpath='{.status.conditions[?(@.type=="Failed")].message}')" ;;
    esac
    for d in containerd etcd kube-apiserver kube-controller-manager kube-scheduler kubelet; do alive "$d"; done
    sleep 2
  done
  "$kubectl" "${ns[@]}" get pods -o wide >&2
  fail "Job $name not complete after $n s"
}
wait_job unlearn-score 1500
say "score Job complete at $(elapsed): $("$kubectl" "${ns[@]}" get job unlearn-score -o jsonpath='{.status.succeeded} of {.spec.completions} indexes succeeded ({.status.completedIndexes})')"
say "kubectl apply -k deploy/k8s-test/gather"
"$kubectl" apply -k deploy/k8s-test/gather | sed 's/^/  /'
wait_job unlearn-score-gather 600
say "gather Job complete at $(elapsed)"
wait_job unlearn-experiment 1500
say "experiment Job complete at $(elapsed)"

# Every pod ran as uid 10001: all it wrote is that user's.
others=$(find "$vol" -path "$vol/inputs" -prune -o ! -user 10001 -print | head -5)
[ -z "$others" ] || fail "files on the volume not written by uid 10001: $others"
"$kubectl" "${ns[@]}" get pods -o jsonpath='{range .items[*]}{.metadata.name} {.spec.securityContext.runAsUser} {.status.phase}{"\n"}{end}' |
  sed 's/^/  pod /'
say "every file the pods wrote on the volume belongs to uid 10001"

wait "$single_pid" || { cat "$scratch/log/single.log" >&2; single_pid=""; fail "the one-process run failed"; }
single_pid=""
strip='walk(if type == "object" then del(.timings) else . end) | del(.settings.paths)'
if ! diff <(jq -S "$strip" "$vol/audit/score.json") <(jq -S "$strip" "$scratch/single/score.json") >"$scratch/score.diff"; then
  head -40 "$scratch/score.diff" >&2
  fail "the gathered score differs from the one-process score (diff in $scratch/score.diff)"
fi
fields='"forget quality \(.forget_quality.estimate), final score \(.final_score.estimate // "none"), forget KLoM \(.klom.forget.estimate)"'
say "the gathered score.json equals the one-process run's (timings and input paths aside): $(jq -r "$fields" "$vol/audit/score.json")"

# The experiment: each shard wrote its seed's records; the report reads both.
for i in 0 1; do
  f=$vol/experiment/results.shard-$i.jsonl
  [ -s "$f" ] || fail "no $f"
  seeds=$(jq -r .seed "$f" | sort -u | tr '\n' ' ')
  [ "$seeds" = "$i " ] || fail "shard $i recorded seeds [$seeds], want [$i]"
done
(cd "$vol" && "$BIN" experiment --config inputs/experiment.yaml --report-only >"$scratch/log/report.log" 2>&1) ||
  fail "--report-only: $(tail -5 "$scratch/log/report.log")"
grep -q 'SSD' "$vol/experiment/RESULTS.md" || fail "RESULTS.md has no SSD row"
say "experiment: shard 0 recorded seed 0, shard 1 seed 1; --report-only wrote RESULTS.md from both"
ok=1
say PASS
