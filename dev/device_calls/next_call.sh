#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, fifteenth session, after checks_s13b.sh and
# checks_s15b.sh ran on an H100: docs/results/session_h100_2026-12-07e.md): checks_s15c.sh, the stream seeds'
# declared values one at a time on the larger n = 16 shapes and u14_stream_sp's stall breakdown. Package with the
# GPU tests (dev/device_calls/README.md), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
exec bash "$(dirname "$0")/checks_s15c.sh"
