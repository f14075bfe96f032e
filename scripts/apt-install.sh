#!/usr/bin/env bash
# Installs the Debian packages named as arguments, with sudo when not root;
# the project's scripts call it with what they found missing
# (scripts/setup-deps.sh, scripts/reference-check.sh). CALLER names the
# caller in its messages.
set -euo pipefail
[ $# -gt 0 ] || exit 0
who=${CALLER:-apt-install}
SUDO=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null; then SUDO=sudo; else
    echo "$who: need root to install: $*" >&2
    exit 1
  fi
fi
echo "$who: installing $*" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "$@" >/dev/null
