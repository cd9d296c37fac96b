#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-08, seventeenth session, which got no GPU): on an H200,
# issue 27's must-show tables first (suites_h200.sh, resumable; call again until it says every slice is done); on any
# other GPU checks_s18a.sh (the stream seeds' hoisted ldmatrix addresses and u14's first-high PRMT_EXPAND: GPU test,
# the n = 16 rows against the seeds as they were, finalist sanitizers, ncu). Package with the GPU tests (README),
# carry dist/gpu_*.tar.xz and dist/seeds_before (dev/device_calls/seeds_before.sh c4760af).
#   LIMIT=560 bash dev/device_calls/next_call.sh
d="$(dirname "$0")"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then exec bash "$d/suites_h200.sh"; fi
exec bash "$d/checks_s18a.sh"
