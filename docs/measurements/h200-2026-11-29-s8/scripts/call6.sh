#!/bin/bash
# Session 8 call F: the floor of a timed trial — each family's seeds and the baselines on a 256 x 256 matrix,
# where the work is negligible: what is left is launch, ramp and the flush's aftermath.
set -u
cd /work/main
R=/tmp/r6; mkdir -p $R
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; TK=.device/s8/tiny.yaml
timeout 100 $SD eval --task $TK --name tiny_b64 --kernel kernels/seeds/bsr_wgmma.cu --kernel kernels/seeds/bsr_mma.cu --kernel kernels/seeds/dense_cublas.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/tiny_b64.txt 2>&1
echo "b64 rc $? at $(el)s" >> $R/timeline.txt
timeout 100 $SD eval --task $TK --name tiny_u90 --kernel kernels/seeds/u14_stream_sp.cu --kernel kernels/seeds/pair_mask_tc.cu --kernel kernels/seeds/csr_packed_rows.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/tiny_u90.txt 2>&1
echo "u90 rc $? at $(el)s" >> $R/timeline.txt
timeout 100 $SD eval --task $TK --name tiny_nm24 --kernel kernels/seeds/nm24_stream_sp.cu --kernel kernels/seeds/nm24_mma_sp.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/tiny_nm24.txt 2>&1
echo "nm24 rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
.device/s7/summ.sh $R/tiny*.txt
grep -h -A3 "kernel ms" $R/tiny*.txt | head -40
