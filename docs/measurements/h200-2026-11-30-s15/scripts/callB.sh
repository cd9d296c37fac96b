#!/bin/bash
# Session 15 call B (nvidia-h200-x2). GPU 0: the llm suite's bf16 tasks, then the four seeds call A's finalist
# run did not reach (banded, block_diagonal, nm24_wgmma_sp, row_compact_dense) through the finalist checks.
# GPU 1: the dlmc suite. Both benches over the whole seed library, into fresh tables.
R=/tmp/rB; mkdir -p $R; trap 'tar czf $OUT/rB.tgz -C /tmp rB' EXIT
source "$(dirname "$0")/pre.sh"
cat .device/dist/BUILT_FROM
( bench_part 1 configs/suites/dlmc.yaml '.*' dlmc 575 ) > $R/gpu1.txt 2>&1 &
( bench_part 0 configs/suites/llm.yaml '_bf16$' llm_bf16 480
  mkdir -p /tmp/seeds4 && cp kernels/seeds/{banded,block_diagonal,nm24_wgmma_sp,row_compact_dense}.cu /tmp/seeds4/
  CUDA_VISIBLE_DEVICES=0 SEEDS_DIR=/tmp/seeds4 timeout $((572 - $(el))) scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 4 1
  echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt ) > $R/gpu0.txt 2>&1
wait; cat $R/gpu0.txt $R/gpu1.txt
