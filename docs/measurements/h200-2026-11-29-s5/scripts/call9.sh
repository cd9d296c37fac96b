#!/bin/bash
# Session 5 call 9: bench of the llm block rows in bf16 with bsr_mma's new defaults (fp16 ran in call 8).
set -u
cd /work/main
R=/tmp/r9; mkdir -p $R
trap 'tar czf $OUT/r9.tgz -C /tmp r9' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
SD=$PWD/.device/dist/bin/sparseditto
timeout 230 $SD bench --suite configs/suites/llm.yaml --name '^llm_block.*_bf16$' --seeds kernels/seeds --out $R/bench_block_bf16 --timing-seconds 0.12 --correctness-trials 1 --stage-timeout 30 > $R/bench_block_bf16.log 2>&1
echo "bench rc $?"
tail -3 $R/bench_block_bf16/bench.txt 2>/dev/null || tail -20 $R/bench_block_bf16.log
