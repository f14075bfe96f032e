# Sourced by the submit scripts: sets and exports UNLEARN, the binary the
# batch scripts run (UNLEARN as given, else unlearn on PATH, else the
# repository's bin/unlearn), or stops with exit code 2. Needs $here, the
# folder of the submit script.
if [ -z "${UNLEARN:-}" ]; then
  UNLEARN=$(command -v unlearn || true)
  [ -n "$UNLEARN" ] || UNLEARN=$(cd "$here/../.." && pwd)/bin/unlearn
fi
[ -x "$UNLEARN" ] || { echo "$0: no unlearn binary at $UNLEARN (set UNLEARN)" >&2; exit 2; }
export UNLEARN
