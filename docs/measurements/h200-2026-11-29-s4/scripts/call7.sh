#!/bin/bash
# Session 4 call 7: the llm unstructured fp16 rows and the dlmc suite with the current seeds (pair_mask_tc
# new, csr_packed_rows' new defaults), gated timing.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r7; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; ln -sfn "$PWD/.device/data" /work/shared/data; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto
timeout 280 $SD bench --suite configs/suites/llm.yaml --name '^llm_unstructured.*_fp16$' --seeds kernels/seeds --out $R/llm_u_fp16 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/cb > $R/llm_stdout.txt 2>&1
echo "llm u fp16 rc $? at $(el)s" >> $R/timeline.txt
timeout $((570 - $(el))) $SD bench --suite configs/suites/dlmc.yaml --seeds kernels/seeds --out $R/dlmc --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 15 --cache /tmp/cd > $R/dlmc_stdout.txt 2>&1
echo "dlmc rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt; cat $R/llm_u_fp16/bench.txt | cut -c1-75,150-200; tail -4 $R/dlmc/bench.txt
