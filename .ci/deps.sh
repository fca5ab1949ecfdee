#!/usr/bin/env bash
# Installs the Debian packages that hybridscope's build and tests need. Idempotent.
set -eu
PKGS="build-essential pkg-config libcjson-dev libopenblas-dev libsdl2-dev libcairo2-dev
      libncurses-dev fonts-dejavu-core tmux xvfb clang libclang-rt-14-dev poppler-utils
      python3"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -z "$missing" ]; then echo "deps: all installed"; exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "deps: installing$missing"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
