#!/usr/bin/env bash
# Installs the Debian packages that a fresh Debian machine with Go lacks,
# for what the argument names (only missing pieces are installed):
#   demo  building and the demo: gcc (cgo) and npm (to fetch ONNX Runtime);
#   test  (the default) those, plus what only the tests use: Debian's
#         libonnx-testdata (the external ONNX conformance suite) and
#         chromium (renders report.html headless; the layout tests).
set -euo pipefail
what=${1:-test}
case $what in
demo | test) ;;
*)
  echo "setup-deps: unknown set $what (want demo or test)" >&2
  exit 2
  ;;
esac
need=()
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v npm >/dev/null || need+=(npm)
if [ "$what" = test ]; then
  [ -d /usr/share/libonnx-testdata/data/node ] || need+=(libonnx-testdata)
  command -v chromium >/dev/null || need+=(chromium)
fi
CALLER=setup-deps "$(dirname "$0")/apt-install.sh" ${need[@]+"${need[@]}"}
