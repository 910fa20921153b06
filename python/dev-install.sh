#!/usr/bin/env bash
# Rebuilds and installs the package into python/.venv (development loop).
set -euo pipefail
cd "$(dirname "$0")"
PATH=$PWD/.venv/bin:$PATH .venv/bin/pip install -q --no-build-isolation \
  -Cbuild-dir=build/pybuild . "$@"
