#!/bin/bash
# Session 12 call 4: nm24_wgmma_sp's new defaults (598bf2c: WS 1, BN 128, STAGES 4, SPLIT_MAX 8) through the
# finalist checks (fin_nm24_fp16: 130x200, n 1, 7, 16, 40, 136; split-K and the producer warp both run) and
# 300x520 bf16, then the llm suite's 2:4 rows. Carry .device/dist, .device/s12.
set -u
cd "$(dirname "$0")/../.."
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r4; mkdir -p $R; trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
cat .device/dist/BUILT_FROM; SD=$PWD/.device/dist/bin/sparseditto; $SD --version
mkdir -p /tmp/seedsw && cp kernels/seeds/nm24_wgmma_sp.cu /tmp/seedsw/
SEEDS_DIR=/tmp/seedsw timeout 150 scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 1 1
echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt; grep -hE "sanitizer|correctness|verdict" $R/fin/*.txt 2>/dev/null | head -12
timeout 150 $SD eval --task .device/s12/pipe/tasks.yaml --name awkward_300x520_bf16 --kernel kernels/seeds/nm24_wgmma_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 60 --cache /tmp/c4 > $R/fin_300x520_bf16.txt 2>&1
echo "finalist 300x520 bf16 rc $? at $(el) s"; grep -E "verdict|correctness|sanitizer|^ +[0-9]+ " $R/fin_300x520_bf16.txt | cut -c1-150
timeout 200 $SD bench --suite configs/suites/llm.yaml --name nm24 --out $R/bench_nm24 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c4 > $R/bench_nm24.log 2>&1
echo "bench nm24 rc $? at $(el) s"; cut -c1-200 $R/bench_nm24/bench.txt
