#!/bin/bash
# Session 14 call 1, from main at .device/dist/BUILT_FROM. Carry .device/dist, .device/data.tgz, .device/s14.
# 1. GPU tests at the head (not run since 96e5f7e; nm24_wgmma_sp changed after it).
# 2. nm24_wgmma_sp through the finalist checks on fin_nm24_fp16 at the head (its #error guard restored).
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r1; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
cat .device/dist/BUILT_FROM; SD=$PWD/.device/dist/bin/sparseditto; $SD --version
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200"
echo "gpu tests done at $(el) s"
mkdir -p /tmp/seedsf && cp kernels/seeds/nm24_wgmma_sp.cu /tmp/seedsf/
SEEDS_DIR=/tmp/seedsf timeout 150 scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 4 3
echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt
