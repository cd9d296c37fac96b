#!/bin/bash
# Session 11 call 4, from main at .device/dist/BUILT_FROM: bench of the llm suite's unstructured 90% and
# 50% fp16 rows (the targets at n 16 and 128) under the current runner.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r4; mkdir -p $R
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
cat .device/dist/BUILT_FROM
SD=$PWD/.device/dist/bin/sparseditto
B="--timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c4"
timeout 230 $SD bench --suite configs/suites/llm.yaml --name 'unstructured90_.*fp16' --out $R/bench_u90_fp16 $B > $R/bench_u90.log 2>&1
echo "bench u90 rc $? at $(el) s"
timeout 230 $SD bench --suite configs/suites/llm.yaml --name 'unstructured50_.*fp16' --out $R/bench_u50_fp16 $B > $R/bench_u50.log 2>&1
echo "bench u50 rc $? at $(el) s"
for d in $R/bench_u90_fp16 $R/bench_u50_fp16; do echo "## $d"; cut -c1-100,160-200 $d/bench.txt 2>/dev/null; done
for f in $R/bench_*.log; do tail -n 3 $f; done
