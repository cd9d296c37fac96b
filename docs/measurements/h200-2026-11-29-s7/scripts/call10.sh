#!/bin/bash
# Session 7 call 10: finalist of bsr_wgmma's wide tile (block-rows of ~12 blocks, n = 1024: NT 256, TMA path).
set -u
cd /work/main
R=/tmp/r10; mkdir -p $R
trap 'tar czf $OUT/r10.tgz -C /tmp r10' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
timeout 85 .device/dist/bin/sparseditto eval --task .device/s7/btasks.yaml --name f_b64_wide --kernel kernels/seeds/bsr_wgmma.cu --finalist --timing-seconds 0.1 --stage-timeout 80 --cache /tmp/cf > $R/fin_f_b64_wide.txt 2>&1
echo "rc $?"
grep -E 'verdict|detail|exited|correctness|rror|stage' $R/fin_f_b64_wide.txt | head -12
