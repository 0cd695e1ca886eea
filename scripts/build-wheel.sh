#!/bin/sh
# Build Nova's wheel into $1 (default dist/). The Dockerfile's build stage and .ci/run both
# call this script, so what CI proves is what the image installs.
set -eu
out="${1:-dist}"
python -m pip wheel --quiet --no-deps --wheel-dir "$out" "$(dirname "$0")/.."
ls "$out"/nova_bot-*.whl
