#!/usr/bin/env bash
# Installs what the tests need and a fresh Debian machine with Go lacks:
# gcc (cgo), npm (to fetch ONNX Runtime), and Debian's libonnx-testdata (the
# external ONNX conformance suite). Only missing pieces are installed.
set -euo pipefail
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v npm >/dev/null || need+=(npm)
[ -d /usr/share/libonnx-testdata/data/node ] || need+=(libonnx-testdata)
CALLER=setup-deps "$(dirname "$0")/apt-install.sh" ${need[@]+"${need[@]}"}
