#!/bin/bash
# Session 15 call A (nvidia-h200-x2). GPU 0: the GPU tests at the head, then every seed of the library
# through the finalist checks (scripts/seed_finalists.sh, first task of each seed). GPU 1: the llm suite's
# fp16 tasks over the whole library into a fresh table (bench --resume continues it in the next call).
R=/tmp/rA; mkdir -p $R; trap 'tar czf $OUT/rA.tgz -C /tmp rA' EXIT
source "$(dirname "$0")/pre.sh"
cat .device/dist/BUILT_FROM; $SD --version
( bench_part 1 configs/suites/llm.yaml '_fp16$' llm_fp16 560 ) > $R/gpu1.txt 2>&1 &
( export CUDA_VISIBLE_DEVICES=0
  timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200"
  echo "gpu tests done at $(el) s"
  SEEDS_DIR=kernels/seeds timeout $((555 - $(el))) scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 6 1
  echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt ) > $R/gpu0.txt 2>&1
wait; cat $R/gpu0.txt $R/gpu1.txt
