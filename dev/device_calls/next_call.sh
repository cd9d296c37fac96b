#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, fourteenth session, after checks_s13a.sh and
# checks_s14b.sh ran on an H100: docs/results/session_h100_2026-12-07d.md): checks_s13b.sh, the split probe, the
# generality suite's unstructured tasks and the n = 16 rows re-benched with u24's THIRDS 32, the stream seeds' paths
# through the finalist sanitizers again, the corpus escapes, the harness batch size and the spilling tunable
# values' A/B. Package with the GPU tests (dev/device_calls/README.md), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
exec bash "$(dirname "$0")/checks_s13b.sh"
