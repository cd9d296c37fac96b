#!/bin/bash
# Session 12 call 1 (prepared in session 11), from main at .device/dist/BUILT_FROM (carry .device/dist,
# .device/data.tgz, .device/s12):
# 1. GPU tests at the head.
# 2. The 2:4 seeds through the finalist checks on configs/suites/seed_finalists.yaml (fin_nm24_fp16 now has
#    n = 136, which takes nm24_wgmma_sp's 256-column TMA tile under the sanitizers; only 7x96 and its smoke
#    shapes were checked in session 11).
# 3. bench of the llm suite's 2:4 rows, now with nm24_wgmma_sp (its 24 rows fit one call).
# Then, in call 2: bash .device/s12/pipe/run.sh (wip/nm24-wgmma-sp-pipe's variants; see its README).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
cat .device/dist/BUILT_FROM
timeout 280 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200"
echo "gpu tests done at $(el) s"
SD=$PWD/.device/dist/bin/sparseditto
mkdir -p /tmp/seeds24 && cp kernels/seeds/nm24_*.cu /tmp/seeds24/
SEEDS_DIR=/tmp/seeds24 timeout 200 scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 3 1
echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt
timeout 150 $SD bench --suite configs/suites/llm.yaml --name nm24 --out $R/bench_nm24 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c1 > $R/bench_nm24.log 2>&1
echo "bench nm24 rc $? at $(el) s"; cut -c1-200 $R/bench_nm24/bench.txt
