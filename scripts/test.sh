#!/usr/bin/env bash
# Installs what is missing (scripts/setup.sh --deps-only), builds what is out of date and runs every
# test with ctest. GPU tests (label "gpu") skip themselves where there is no GPU.
#   scripts/test.sh                 all tests
#   scripts/test.sh -L gpu          only the GPU tests; any ctest arguments pass through
# Environment: BUILD_DIR (default build), CMAKE_BUILD_TYPE (default Release), JOBS (default nproc).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh --deps-only
export PATH="/usr/local/cuda/bin:$PATH"
BUILD_DIR="${BUILD_DIR:-build}"
JOBS="${JOBS:-$(nproc)}"

if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}"
fi
cmake --build "$BUILD_DIR" -j "$JOBS"
cd "$BUILD_DIR"
ctest --output-on-failure -j "$JOBS" --timeout 600 "$@"
