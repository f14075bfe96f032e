#!/usr/bin/env bash
# Builds the binaries of a one-node Kubernetes cluster from release sources
# through the Go module proxy, into a cache outside the checkout, and prints
# that folder (the last line of its output). scripts/k8s-test.sh calls it.
#
#   $UNLEARN_K8S_CACHE (default ~/.cache/unlearn-k8s)/KUBERNETES_VERSION/bin/
#     kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd
#
# Kubernetes: k8s.io/kubernetes's module holds the release's go.mod, whose
# replace lines point its k8s.io/* modules at ./staging/src/, a folder the
# module zip leaves out (each staging module is a module of its own, published
# as k8s.io/NAME v0.MINOR.PATCH). A copy of the source with those replaces
# pointed at the published modules (and go.work, which names the staging
# folders, removed) builds the release's commands. etcd: the server module's
# main package, built from a module of its own that requires it (the server's
# go.mod replaces its sibling modules with ../ paths, which `go install
# pkg@version` refuses). A second run finds the binaries and builds nothing.
set -euo pipefail
K8S_VERSION=${K8S_VERSION:-v1.34.3}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
cache=${UNLEARN_K8S_CACHE:-$HOME/.cache/unlearn-k8s}/$K8S_VERSION
say() { echo "k8s-build: $*" >&2; }
fail() { echo "k8s-build: FAIL: $*" >&2; exit 1; }
cmds=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
stamp="kubernetes $K8S_VERSION, etcd $ETCD_VERSION, $(go version | cut -d' ' -f3)"

if [ -s "$cache/bin/BUILT" ] && [ "$(cat "$cache/bin/BUILT")" = "$stamp" ]; then
  echo "$cache"
  exit 0
fi
t0=$(date +%s)
command -v go >/dev/null || fail "no go on PATH"
mkdir -p "$cache/bin"
rm -f "$cache/bin/BUILT"
# Static binaries, like the release's; GOWORK off so no go.work above the
# cache folder applies; GOFLAGS as the caller set them, less -mod.
export CGO_ENABLED=0 GOWORK=off GOTOOLCHAIN=local
export GOFLAGS="${GOFLAGS:-}"
minor=${K8S_VERSION#v1.}
minor=${minor%%.*}
staging_version=v0.${K8S_VERSION#v1.}

if ! [ -s "$cache/src/go.mod" ]; then
  say "downloading k8s.io/kubernetes@$K8S_VERSION"
  dir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$dir" ] || fail "go mod download k8s.io/kubernetes@$K8S_VERSION gave no folder"
  rm -rf "$cache/src.tmp"
  cp -r "$dir" "$cache/src.tmp"
  chmod -R u+w "$cache/src.tmp"
  # The module zip keeps vendor/ empty (vendored code is not part of a
  # module), and an empty vendor/ would make go build use -mod=vendor.
  rm -rf "$cache/src.tmp/vendor" "$cache/src.tmp/go.work" "$cache/src.tmp/go.work.sum"
  sed -i "s|^\([[:space:]]*k8s.io/[a-z0-9-]*\) => ./staging/src/k8s.io/[a-z0-9-]*\$|\1 => \1 $staging_version|" \
    "$cache/src.tmp/go.mod"
  ! grep -q '=> ./staging' "$cache/src.tmp/go.mod" || fail "a staging replace was left in go.mod"
  mv "$cache/src.tmp" "$cache/src"
fi
(
  cd "$cache/src"
  say "downloading the modules the commands import (go mod download; ~9 min the first time on a slow link)"
  # go.sum lacks the published staging modules: -mod=mod records them.
  ts=$(date +%s)
  nice go mod download >/dev/null
  say "modules downloaded in $(($(date +%s) - ts)) s"
  ts=$(date +%s)
  ldflags="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean"
    ldflags+=" -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  pkgs=()
  for c in "${cmds[@]}"; do pkgs+=("./cmd/$c"); done
  say "building ${cmds[*]} (nice; ~4 min on 2 cores)"
  nice go build -mod=mod -trimpath -ldflags "$ldflags" -o "$cache/bin/" "${pkgs[@]}"
  say "built in $(($(date +%s) - ts)) s"
)

# etcd: a module of its own requiring the server module.
say "building etcd $ETCD_VERSION"
ts=$(date +%s)
rm -rf "$cache/etcd-build"
mkdir -p "$cache/etcd-build"
(
  cd "$cache/etcd-build"
  go mod init unlearn-k8s/etcd >/dev/null 2>&1
  nice go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >/dev/null 2>&1 || nice go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
  nice go build -trimpath -ldflags "-s -w" -o "$cache/bin/etcd" go.etcd.io/etcd/server/v3
)
rm -rf "$cache/etcd-build"
say "etcd built in $(($(date +%s) - ts)) s"

for c in "${cmds[@]}" etcd; do [ -x "$cache/bin/$c" ] || fail "no $cache/bin/$c after the build"; done
echo "$stamp" >"$cache/bin/BUILT"
say "built in $(($(date +%s) - t0)) s: $(du -sh "$cache/bin" | cut -f1) of binaries in $cache/bin"
echo "$cache"
