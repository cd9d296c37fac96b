#!/usr/bin/env bash
# The sixteenth session's device calls (2026-12-08): on an H200, issue 27's must-show tables first (suites_h200.sh,
# resumable; call again until it says every slice is done); on any other GPU checks_s16a.sh (the stream seeds after
# their slots change: GPU test, SASS, declared values, finalist sanitizers, the n = 16 re-bench). Package with the GPU
# tests (README), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
d="$(dirname "$0")"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash "$d/suites_h200.sh"; fi
exec bash "$d/checks_s16a.sh"
