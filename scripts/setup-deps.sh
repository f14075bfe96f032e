#!/usr/bin/env bash
# Installs what the tests need and a fresh Debian machine with Go lacks:
# gcc (cgo), npm (to fetch ONNX Runtime), and Debian's libonnx-testdata (the
# external ONNX conformance suite). Only missing pieces are installed.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v npm >/dev/null || need+=(npm)
[ -d /usr/share/libonnx-testdata/data/node ] || need+=(libonnx-testdata)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then SUDO=sudo; else
      echo "setup-deps: need root to install: ${need[*]}" >&2; exit 1
    fi
  fi
  echo "setup-deps: installing ${need[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
