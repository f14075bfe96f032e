#!/usr/bin/env bash
# Fetches libonnxruntime.so.1 (ONNX Runtime 1.24.3, Linux x64, CPU) from the npm
# package onnxruntime-node@1.24.3 with `npm pack` (no install scripts run), checks
# its sha256 and puts it in .ort/ (ignored by git). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
DEST=.ort
LIB=$DEST/libonnxruntime.so.1
WANT=92ba8e44d31b80a34f5e805076a044122c3be1fffe0d88ed790de7267b0b2682
PKG=onnxruntime-node@1.24.3
MEMBER=package/bin/napi-v6/linux/x64/libonnxruntime.so.1

# unlearn refuses a library that group or others may write, or one in such a
# folder (a umask of 002 would make both): take those bits away.
if [ -f "$LIB" ] && echo "$WANT  $LIB" | sha256sum -c --status; then
  chmod go-w "$DEST" "$LIB"
  exit 0
fi
if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "fetch-ort: the npm package only carries a Linux x64 build usable here; on $(uname -s)-$(uname -m) set ONNXRUNTIME_LIB to an ONNX Runtime 1.24.x library" >&2
  exit 1
fi
if ! command -v npm >/dev/null; then
  echo "fetch-ort: npm is needed to fetch $PKG (apt-get install npm)" >&2
  exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "fetch-ort: npm pack $PKG" >&2
(cd "$tmp" && npm pack --silent --ignore-scripts "$PKG" >/dev/null)
tar -xzf "$tmp"/onnxruntime-node-1.24.3.tgz -C "$tmp" "$MEMBER"
got=$(sha256sum "$tmp/$MEMBER" | cut -d' ' -f1)
if [ "$got" != "$WANT" ]; then
  echo "fetch-ort: sha256 mismatch for $MEMBER: got $got, want $WANT" >&2
  exit 1
fi
mkdir -p "$DEST"
cp "$tmp/$MEMBER" "$LIB.tmp"
chmod go-w "$DEST" "$LIB.tmp"
mv "$LIB.tmp" "$LIB"
echo "fetch-ort: installed $LIB (ONNX Runtime 1.24.3, sha256 ok)" >&2
