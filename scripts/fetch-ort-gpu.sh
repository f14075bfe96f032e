#!/usr/bin/env bash
# Fetches ONNX Runtime 1.29.0's GPU build for Linux x64 (the main library and
# its CUDA execution provider, linked against CUDA 13 and cuDNN 9) from npm with
# `npm pack` (no install scripts run), checks the sha256 of both packed
# packages and of every file taken out of them, and puts the three files in
# .ort-gpu/ (ignored by git), apart from the CPU library in .ort/. Idempotent:
# nothing is fetched when .ort-gpu/ already holds the pinned files. `make
# ort-gpu` runs it; `make test` does not (330 MB to download; the CUDA tests
# skip without it).
#
# The packages are asus4/onnxruntime-unity's repackaging of ONNX Runtime's
# release binaries (MIT): com.github.asus4.onnxruntime@0.4.9 holds the main
# library of every platform (150 MB packed), and
# com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9 the CUDA provider (179 MB
# packed). unlearn loads .ort-gpu/libonnxruntime.so only for --device cuda
# (docs/DESIGN.md, "GPU runtime"); the CPU library stays 1.24.3.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.ort-gpu
MEMBER_DIR=package/Plugins/Linux/x64
# package@version  sha256 of the packed .tgz  files taken from it
PKG_MAIN=com.github.asus4.onnxruntime@0.4.9
TGZ_MAIN=com.github.asus4.onnxruntime-0.4.9.tgz
SUM_MAIN=e59788788818fdde1b2e522e766a21ba0f7d8391de55737abf81e32cc801785d
PKG_GPU=com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9
TGZ_GPU=com.github.asus4.onnxruntime.linux-x64-gpu-0.4.9.tgz
SUM_GPU=2b459e0c17f340c92970c10ed86de4f37a3009f93c14053e6ad4334cbb6be412
# sha256 of each installed file (computed once from the packages above).
# libonnxruntime_providers_shared.so is in both packages with different bytes
# (same strings; another link): the GPU package's copy is the one built with
# the CUDA provider, so that is the one taken.
declare -A WANT=(
  [libonnxruntime.so]=5715f06d8992ca8eeeddcce43df3a7d38f97d537052126f558e912cb312460ca
  [libonnxruntime_providers_shared.so]=c6a12593396095f5670160e284c35d1700b7708cf3037b7042e2a5200ccae772
  [libonnxruntime_providers_cuda.so]=56cf3254b118ad837ccc4ed8f6d1b23504bbf7ef91b34cbc0b289cb7f10b3037
)
FILES=(libonnxruntime.so libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so)

installed() {
  local f
  for f in "${FILES[@]}"; do
    [ -f "$DEST/$f" ] && echo "${WANT[$f]}  $DEST/$f" | sha256sum -c --status || return 1
  done
}

# unlearn refuses a library that group or others may write, or one in such a
# folder (a umask of 002 would make both): take those bits away.
if installed; then
  chmod go-w "$DEST" "${FILES[@]/#/$DEST/}"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "fetch-ort-gpu: the npm packages carry a CUDA build for Linux x64 only, not $(uname -s)-$(uname -m)" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "fetch-ort-gpu: npm is needed to fetch $PKG_MAIN and $PKG_GPU (apt-get install npm)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# fetch PKG TGZ SUM MEMBER...: npm pack PKG, check the .tgz, extract MEMBERs.
fetch() {
  local pkg=$1 tgz=$2 sum=$3
  shift 3
  echo "fetch-ort-gpu: npm pack $pkg" >&2
  if ! (cd "$tmp" && npm pack --silent --ignore-scripts "$pkg" >/dev/null); then
    echo "fetch-ort-gpu: npm pack $pkg failed (network? registry?)" >&2
    exit 1
  fi
  local got
  got=$(sha256sum "$tmp/$tgz" | cut -d' ' -f1)
  if [ "$got" != "$sum" ]; then
    echo "fetch-ort-gpu: sha256 mismatch for $tgz: got $got, want $sum" >&2
    exit 1
  fi
  mkdir -p "$tmp/${tgz%.tgz}"
  tar -xzf "$tmp/$tgz" -C "$tmp/${tgz%.tgz}" "${@/#/$MEMBER_DIR/}"
  rm -f "$tmp/$tgz" # 150-180 MB each: do not hold both at once
  for f in "$@"; do
    got=$(sha256sum "$tmp/${tgz%.tgz}/$MEMBER_DIR/$f" | cut -d' ' -f1)
    if [ "$got" != "${WANT[$f]}" ]; then
      echo "fetch-ort-gpu: sha256 mismatch for $f from $tgz: got $got, want ${WANT[$f]}" >&2
      exit 1
    fi
    mv "$tmp/${tgz%.tgz}/$MEMBER_DIR/$f" "$tmp/$f"
  done
}
fetch "$PKG_MAIN" "$TGZ_MAIN" "$SUM_MAIN" libonnxruntime.so
fetch "$PKG_GPU" "$TGZ_GPU" "$SUM_GPU" libonnxruntime_providers_shared.so libonnxruntime_providers_cuda.so

mkdir -p "$DEST"
chmod go-w "$DEST"
for f in "${FILES[@]}"; do
  cp "$tmp/$f" "$DEST/$f.tmp"
  chmod go-w "$DEST/$f.tmp"
  mv "$DEST/$f.tmp" "$DEST/$f"
done
if ! installed; then
  echo "fetch-ort-gpu: $DEST changed while installing; run it again" >&2
  exit 1
fi
echo "fetch-ort-gpu: installed ${FILES[*]} in $DEST (ONNX Runtime 1.29.0 with the CUDA provider, sha256 ok)" >&2
