#!/bin/bash
# Session 11 call 6, from main at .device/dist/BUILT_FROM: nm24_stream_sp at n 16 on the four llm shapes,
# the seed at head against its CTAS_PER_SM 2 and 3, WARPS 4, and a split count rounded down (floor:
# at most CTAS_PER_SM CTAs an SM instead of ceil's 160 CTAs on 132 SMs at 4096²).
set -u
cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r6; mkdir -p $R
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s11/v
KS="--kernel kernels/seeds/nm24_stream_sp.cu --kernel $V/nm24_cps2.cu --kernel $V/nm24_cps3.cu --kernel $V/nm24_w4.cu --kernel $V/nm24_floor.cu"
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192; do
  timeout 70 $SD eval --task .device/s11/tasks.yaml --name $t $KS --timing-seconds 0.15 --stage-timeout 40 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"
done
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192; do echo "## $t"; grep -E "^candidate|verdict|^ +16 " $R/$t.txt | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/' | paste -sd' ' | sed -E 's/ (nm24_)/\n\1/g'; done
