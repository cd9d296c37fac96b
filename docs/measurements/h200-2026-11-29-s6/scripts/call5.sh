#!/bin/bash
# Session 6 call 5: sparseditto bench over the llm suite's unstructured rows (fp16, all; bf16, 90%) with every
# seed of kernels/seeds at 4b830a7 (u14_stream_sp now among them).
set -u
cd /work/main
R=/tmp/r5; mkdir -p $R
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto
timeout 330 $SD bench --suite configs/suites/llm.yaml --name '^llm_unstructured.*_fp16$' --seeds kernels/seeds --out $R/bench_u_fp16 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench_u_fp16.log 2>&1
echo "bench fp16 rc $? at $(el)s" >> $R/timeline.txt
timeout 150 $SD bench --suite configs/suites/llm.yaml --name '^llm_unstructured90_.*_bf16$' --seeds kernels/seeds --out $R/bench_u90_bf16 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench_u90_bf16.log 2>&1
echo "bench bf16 rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
cat $R/bench_u_fp16/bench.txt 2>/dev/null | head -60 || tail -20 $R/bench_u_fp16.log
cat $R/bench_u90_bf16/bench.txt 2>/dev/null | head -30 || tail -20 $R/bench_u90_bf16.log
