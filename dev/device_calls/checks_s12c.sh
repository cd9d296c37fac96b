#!/usr/bin/env bash
# The twelfth session's third device call (2026-12-07, refused, so the next session's first; the thirteenth had no
# device time to run it): SPREAD_RESIDUAL and RESIDUAL_FIRST in u14_stream_sp and u24_stream_sp (the warp's residual
# lists spread over its eight quads; the walk moved before the stream's first computes), BALANCE_ROWS (rows dealt to
# the tiles by nonzero count) and u24's THIRDS (third values through a second mma.sp), checked by the stream seeds'
# GPU test (each variant, skewed rows, both layouts); STAGE_A of nm24_stream_sp and u14_stream_sp (stage_ab.sh); the
# corpus's sanitizer escapes
# (outlive_under_sanitizer.cu's first GPU run); A/B'd against the in-order walk
# on uniform and skewed rows (dev/skewed_residual/ab.sh), nm24_stream_sp's and u14_stream_sp's split counts forced
# (dev/stream_plan/split_probe.cu), the harness bias at batch caps of 2 and 50 (dev/harness_bias/batch_size.sh), then
# the generality suite's unstructured tasks re-benched in the time left.
#   LIMIT=560 bash dev/device_calls/checks_s12c.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
mkdir -p build/bin && cp -f dist/gpu/bin/* build/bin/ && ln -sfn "$here/dist/gpu/lib" build/lib
timeout 240 build/bin/stream_seeds_gpu_test > $L/stream_seeds.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ +(OK|FAILED|PASSED) " $L/stream_seeds.log | head
dev/skewed_residual/ab.sh "$SD" dist/ab ${AB_LIMIT:-240} | tee $L/ab.txt
dev/stream_n16/stage_ab.sh "$SD" dist/stage_ab 130 | tee $L/stage_ab.txt  # nm24_stream_sp, u14_stream_sp: STAGE_A 0 against 1
for seed in nm24 u14; do  # split counts forced (dev/stream_plan)
  nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=$seed -o dist/split_$seed dev/stream_plan/split_probe.cu && timeout 60 dist/split_$seed | tee $L/split_$seed.txt
done
(( $(left) > 230 )) && { SPARSEDITTO_CORPUS_ONLY=outlive_under_sanitizer.cu,escape_under_sanitizer.cu timeout 200 build/bin/adversarial_corpus_gpu_test > $L/corpus.log 2>&1
  echo "corpus exit $?"; grep -E "^[a-z0-9_]+\.cu |^corpus|PASSED|FAILED" $L/corpus.log | cut -c1-250; }
(( $(left) > 200 )) && dev/harness_bias/batch_size.sh "$SD" dist/batch_size | tee $L/batch_size.txt  # the harness bias by batch size
tar -C dist --exclude=ab/v --exclude=ab/cache -cJf $OUT/logs.tar.xz logs ab
(( $(left) > 100 )) && bench_slice configs/suites/generality.yaml '^gen_unstructured' dist/bench_gen_u_s12 --timing-seconds 0.3
grep -E "^gen_unstructured" dist/bench_gen_u_s12/bench.txt | cut -c1-140
echo "done, left $(left)s"
