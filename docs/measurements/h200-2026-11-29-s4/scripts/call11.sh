#!/bin/bash
# Session 4 call 11: the llm u90 fp16 rows with every seed's time (bench.json seeds_ms, a5a9834).
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r11; mkdir -p $R
trap 'tar czf $OUT/r11.tgz -C /tmp r11' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
SD=$PWD/.device/dist/bin/sparseditto
timeout 150 $SD bench --suite configs/suites/llm.yaml --name '^llm_unstructured(90|50)_.*_fp16$' --seeds kernels/seeds --out $R/llm_u90_u50_fp16 --timing-seconds 0.1 --correctness-trials 1 --stage-timeout 30 --cache /tmp/cb > $R/llm_stdout.txt 2>&1
echo "rc $?"; cut -d, -f1,3,4,11 $R/llm_u90_u50_fp16/bench.csv | grep -E ",16,|,128," | head -20
