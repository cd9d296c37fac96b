#!/bin/bash
# Session 7 call 5: sparseditto bench over the llm suite's block 64 rows (fp16, bf16; suite arch sm_90a, so
# bsr_wgmma is among the seeds), tree with bsr_wgmma committed.
set -u
cd /work/main
R=/tmp/r5; mkdir -p $R
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
SD=$PWD/.device/dist/bin/sparseditto
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/gpu.txt
timeout 560 $SD bench --suite configs/suites/llm.yaml --name 'llm_block64_' --seeds kernels/seeds --out $R/llm_block64_bench --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench.txt 2>&1
echo "bench rc $?" >> $R/bench.txt
ls $R $R/llm_block64_bench 2>/dev/null
tail -60 $R/bench.txt
