#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, twelfth session, whose own run of it was refused):
# SPREAD_RESIDUAL, RESIDUAL_FIRST and BALANCE_ROWS A/B in u14_stream_sp and u24_stream_sp on uniform and skewed rows (dev/skewed_residual/ab.sh:
# both walks verified and timed in one eval a task), the stream seeds' GPU test, then the generality suite's
# unstructured tasks re-benched. If spread wins on skewed rows and holds on uniform ones, flip the default to 1 and
# re-bench. Package with the GPU tests (dev/device_calls/README.md), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
exec bash "$(dirname "$0")/checks_s12c.sh"
