#!/bin/bash
# Session 13 call 5: bench of the llm 2:4 rows (fp16, bf16) at 3653943 (nm24_wgmma_sp's resident-cluster split).
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r5; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
SD=$PWD/.device/dist/bin/sparseditto
timeout 400 $SD bench --suite configs/suites/llm.yaml --name 'nm24_' --seeds kernels/seeds --resume --out $R/llm --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c5 > $R/llm_stdout.txt 2>&1
echo "bench rc $?"; cut -c1-220 $R/llm/bench.txt
