#!/bin/sh
# Bootstrap the build system from a git checkout.
set -e
cd "$(dirname "$0")"
mkdir -p build-aux
# Automake ships the TAP driver but installs it only on request.
cp -f "$(automake --print-libdir)/tap-driver.sh" build-aux/tap-driver.sh
autoreconf --install --force
