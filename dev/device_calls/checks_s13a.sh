#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, thirteenth session, which had no device time): every
# path off by default in the stream seeds checked by the stream seeds' GPU test (SPREAD_RESIDUAL, RESIDUAL_FIRST,
# BALANCE_ROWS on skewed rows, u24's THIRDS, STAGE_A of nm24 and u14; both layouts, fp16 and bf16), then A/B'd:
# the residual tunables on uniform and skewed rows (dev/skewed_residual/ab.sh: 17 variants, 6 tasks, skewed first)
# and STAGE_A on the n = 16 shapes (dev/stream_n16/stage_ab.sh). Decide the defaults from its output; the second
# call (checks_s13b.sh, the machine still warm) re-benches with them.
#   LIMIT=560 bash dev/device_calls/checks_s13a.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
use_package_bins
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds.log 2>&1; echo "stream_seeds_gpu_test exit $? ($(left)s left)"
grep -E "^\[ +(OK|FAILED|PASSED) |Failure|Which is|rror" $L/stream_seeds.log | head -30 | cut -c1-220
dev/skewed_residual/ab.sh "$SD" dist/ab $(( $(left) - 150 )) | tee $L/ab.txt
dev/stream_n16/stage_ab.sh "$SD" dist/stage_ab $(( $(left) - 20 )) | tee $L/stage_ab.txt
tar -C dist --exclude=ab/v --exclude=ab/cache --exclude=stage_ab/v --exclude=stage_ab/cache -cJf $OUT/logs_s13a.tar.xz logs ab stage_ab
echo "done, left $(left)s"
