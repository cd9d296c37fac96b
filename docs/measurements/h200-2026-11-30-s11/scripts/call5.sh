#!/bin/bash
# Session 11 call 5, from main at .device/dist/BUILT_FROM: bench of the rest of the llm suite (unstructured
# 70% both dtypes, 50% and 90% bf16; block 32 at 80/90%, block 64 at 80%) under the current runner.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r5; mkdir -p $R
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
cat .device/dist/BUILT_FROM
SD=$PWD/.device/dist/bin/sparseditto
B="--timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c5"
timeout 260 $SD bench --suite configs/suites/llm.yaml --name 'unstructured70_|unstructured(50|90)_.*bf16' --out $R/bench_u_rest $B > $R/bench_u_rest.log 2>&1
echo "bench u rest rc $? at $(el) s"
timeout 220 $SD bench --suite configs/suites/llm.yaml --name 'block32_|block64_80' --out $R/bench_b_rest $B > $R/bench_b_rest.log 2>&1
echo "bench b rest rc $? at $(el) s"
for d in $R/bench_u_rest $R/bench_b_rest; do echo "## $d"; tail -n 3 $d/bench.txt; done
for f in $R/bench_*.log; do tail -n 3 $f; done
