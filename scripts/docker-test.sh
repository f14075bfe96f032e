#!/usr/bin/env bash
# `make test-docker` (issue 46): builds the Dockerfile with no registry and
# runs one shard of a small audit in the container, as its unprivileged
# user, writing to a mounted folder; the task it wrote must equal the same
# shard run on this machine (timings aside; the trained model's SHA-256
# included). The base image is made here: debootstrap --variant=minbase
# bookworm from this machine's apt mirror, then docker import (cached as
# a tarball in $UNLEARN_BASE_CACHE, default ~/.cache/unlearn, so a second
# run skips the ~2 minutes). The image is built from this machine's
# bin/unlearn and .ort/ (--build-arg FILES=host). Installs docker.io and
# debootstrap if missing (needs root). dockerd runs with its own socket,
# data and exec roots and pid file in a mktemp folder, no iptables and no
# bridge (containers get --network none), and is stopped by its pid file
# whatever the outcome.
#
# --base only makes the cached base tarball and exits: .ci/run starts it
# beside `make test`, since debootstrap mostly waits on the network.
# --save FILE builds the image, checks its user and writes it to FILE (a
# path relative to the repository, or absolute) with
# `docker save` (scripts/k8s-test.sh imports it into its cluster's
# containerd); it runs no audit.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
t0=$(date +%s)
say() { echo "docker-test: $*"; }
fail() { echo "docker-test: FAIL: $*" >&2; exit 1; }

base_only=0 save=""
[ "${1:-}" = --base ] && base_only=1
if [ "${1:-}" = --save ]; then
  save=${2:-}
  [ -n "$save" ] || fail "--save needs a file name"
  case $save in /*) ;; *) save=$PWD/$save ;; esac
fi
[ "$(id -u)" = 0 ] || fail "needs root (dockerd, debootstrap; apt-get installs what is missing)"
need=()
if [ $base_only = 0 ] && ! { [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ]; }; then need+=(docker.io); fi
command -v debootstrap >/dev/null || need+=(debootstrap)
command -v jq >/dev/null || need+=(jq)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# Debian's client, which builds with the daemon's BuildKit (a newer docker
# elsewhere on the PATH may want the buildx plugin).
docker=/usr/bin/docker

scratch=$(mktemp -d /tmp/unlearn-docker.XXXXXX)
mkdir -p "$scratch"/{data,exec,shard}
export DOCKER_HOST=unix://$scratch/docker.sock
ok=0
cleanup() {
  local rc=$? pid
  set +e
  if [ -s "$scratch/docker.pid" ]; then
    pid=$(cat "$scratch/docker.pid")
    if kill "$pid" 2>/dev/null; then
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && { say "dockerd ($pid) still running after 20 s: SIGKILL"; kill -9 "$pid"; }
    fi
  fi
  if [ "$ok" = 1 ] && [ "${KEEP:-0}" != 1 ]; then
    rm -rf "$scratch"
  else
    say "logs and results kept in $scratch"
  fi
  say "took $(($(date +%s) - t0)) s"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# A Debian base made here: no registry is needed.
cache=${UNLEARN_BASE_CACHE:-$HOME/.cache/unlearn}
base_tar=$cache/debian-bookworm-minbase.tar
if [ ! -s "$base_tar" ]; then
  mirror=$(sed -n 's/^URIs: *\([^ ]*\/debian\)\/*$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  [ -n "$mirror" ] || mirror=$(sed -n 's/^deb \(\[[^]]*\] \)\?\([^ ]*\/debian\)\/* .*/\2/p' /etc/apt/sources.list 2>/dev/null | head -1)
  mirror=${mirror:-http://deb.debian.org/debian}
  say "debootstrap --variant=minbase bookworm from $mirror (cached in $base_tar)"
  debootstrap --variant=minbase bookworm "$scratch/rootfs" "$mirror" >"$scratch/debootstrap.log" 2>&1 ||
    fail "debootstrap: $(tail -5 "$scratch/debootstrap.log")"
  rm -rf "$scratch/rootfs"/var/cache/apt/archives/*.deb "$scratch/rootfs"/var/lib/apt/lists/*
  mkdir -p "$cache"
  tar -C "$scratch/rootfs" -cf "$base_tar.tmp" . && mv "$base_tar.tmp" "$base_tar"
  rm -rf "$scratch/rootfs"
fi
if [ $base_only = 1 ]; then
  say "base ready: $base_tar"
  ok=1
  exit 0
fi
for f in bin/unlearn .ort/libonnxruntime.so.1; do [ -e "$f" ] || fail "no $f (make build ort)"; done

# dockerd starts its own containerd, which stops with it; where a system
# containerd runs (installing docker.io under systemd starts one), dockerd
# uses that instead, and its own namespaces keep it apart from the system's
# dockerd.
dockerd --iptables=false --ip6tables=false --bridge=none --host="$DOCKER_HOST" --pidfile="$scratch/docker.pid" \
  --data-root="$scratch/data" --exec-root="$scratch/exec" \
  --containerd-namespace=unlearn-test --containerd-plugins-namespace=unlearn-test-plugins >"$scratch/dockerd.log" 2>&1 &
for i in $(seq 60); do
  $docker version >/dev/null 2>&1 && break
  [ "$i" = 60 ] && fail "dockerd did not answer in 30 s: $(tail -5 "$scratch/dockerd.log")"
  sleep 0.5
done
say "dockerd $($docker version -f '{{.Server.Version}}') up in $(($(date +%s) - t0)) s"

$docker import "$base_tar" unlearn-base:bookworm >/dev/null
say "base image unlearn-base:bookworm imported ($(du -h "$base_tar" | cut -f1) tarball) at $(($(date +%s) - t0)) s"

DOCKER_BUILDKIT=1 $docker build --network=none --progress=plain --build-arg FILES=host --build-arg BASE=unlearn-base:bookworm \
  -t unlearn:test . >"$scratch/build.log" 2>&1 || fail "docker build: $(tail -20 "$scratch/build.log")"
size=$($docker image inspect -f '{{.Size}}' unlearn:test)
bsize=$($docker image inspect -f '{{.Size}}' unlearn-base:bookworm)
say "image unlearn:test built at $(($(date +%s) - t0)) s: $((size / 1000000)) MB ($((bsize / 1000000)) MB of it the base)"
user=$($docker run --rm --network none --entrypoint /usr/bin/id unlearn:test -u)
[ "$user" = 10001 ] || fail "the container runs as uid $user, want 10001"
if [ -n "$save" ]; then
  $docker save -o "$save" unlearn:test
  say "saved unlearn:test to $save ($(du -h "$save" | cut -f1))"
  ok=1
  exit 0
fi

# Shard 0 of 4 of the small audit make test-slurm runs (task 0: oracle 0),
# in the container (its bundled data is the default --data) and here.
audit=(--method finetune --epochs 1 --k 2 --train-epochs 1 --retain-sample 200 --test-sample 200 --bootstrap 20
  --threads 1 --shards 4 --shard 0)
chown 10001:10001 "$scratch/shard"
# As deploy/k8s runs it: a read-only root file system with /tmp writable, no
# capabilities, no privilege escalation (the "restricted" pod settings).
$docker run --rm --network none --read-only --tmpfs /tmp --cap-drop ALL --security-opt no-new-privileges \
  -v "$repo/testdata:/in:ro" -v "$scratch/shard:/work/results" unlearn:test \
  score --model /in/resnet_small_train.onnx --forget /in/demo/forget_nonIID.txt "${audit[@]}" --results /work/results \
  >"$scratch/container.log" 2>&1 || fail "unlearn score in the container: $(tail -20 "$scratch/container.log")"
say "the container's shard done at $(($(date +%s) - t0)) s: $(tr '\n' ' ' <"$scratch/container.log")"
env -u ONNXRUNTIME_LIB ./bin/unlearn score --model testdata/resnet_small_train.onnx --forget testdata/demo/forget_nonIID.txt "${audit[@]}" \
  --results "$scratch/host" >"$scratch/host.log" 2>&1 || fail "unlearn score here: $(tail -20 "$scratch/host.log")"
# settings.json: its setup (what the tasks' digest covers; the paths beside
# it differ); the task: all of it but the timings.
for f in settings.json:.setup 'tasks/oracle-0000.json:walk(if type == "object" then del(.timings) else . end)'; do
  filter=${f#*:} f=${f%%:*}
  [ "$(stat -c %u "$scratch/shard/$f")" = 10001 ] || fail "$f in the mounted folder is not the container user's"
  diff <(jq -S "$filter" "$scratch/shard/$f") <(jq -S "$filter" "$scratch/host/$f") >"$scratch/diff" ||
    fail "the container's $f differs from this machine's: $(head -20 "$scratch/diff")"
done
say "the container's task (model $(jq -r .model_sha256 "$scratch/shard/tasks/oracle-0000.json" | cut -c1-16)...) equals this machine's (timings aside)"
ok=1
say PASS
