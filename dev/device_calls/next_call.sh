#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-08, sixteenth session): on an H200, issue 27's must-show
# tables first (suites_h200.sh, resumable; call again until it says every slice is done); on any other GPU
# checks_s17a.sh (u14_stream_sp's PRMT_EXPAND: GPU test, A/B on the u90 shapes, finalist sanitizers, ncu). Package with the GPU
# tests (README), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
d="$(dirname "$0")"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash "$d/suites_h200.sh"; fi
exec bash "$d/checks_s17a.sh"
