#!/bin/bash
# Session 13 call 6: the dlmc suite with dense_cublaslt, over the five seeds that can win there (the four that
# were best in some dlmc row in session 12 -- dense_cublas, csr_warp_per_row, csr_packed_rows, u14_stream_sp --
# and dense_cublaslt; csr_merge_path, csr_sputnik_1d, bitmap_tc and pair_mask_tc were best in none and are
# left out to fit the device time left). Carry .device/dist, .device/data.tgz, .device/s13.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r6; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto
timeout 310 $SD bench --suite configs/suites/dlmc.yaml --seeds .device/s13/dlmc_seeds --resume --out $R/dlmc --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 15 --cache /tmp/cd > $R/dlmc_stdout.txt 2>&1
echo "dlmc rc $? at $(el) s"; tail -3 $R/dlmc/bench.txt; grep -c . $R/dlmc/bench.csv
