#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, thirteenth session, which had no device time; the
# twelfth's own plan, checks_s12c.sh, never ran: it is folded in and removed): checks_s13a.sh, the stream seeds' GPU test
# over every path off by default, then the residual and STAGE_A A/Bs. Then edit the defaults the A/Bs pick and run
# checks_s13b.sh on the warm machine (split probe, re-bench, corpus, harness batch size). Package with the GPU tests
# (dev/device_calls/README.md), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/next_call.sh
exec bash "$(dirname "$0")/checks_s13a.sh"
