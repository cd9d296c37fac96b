#!/bin/bash
# Session 14 call 3: u24_stream_sp with the residual staged in shared memory, and four tunable variants
# (.device/s14/v), on the u50 n = 16 tasks and u70 4096^2; ncu of the default on u50 4096^2.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r3; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; T=.device/s14/u24_tasks.yaml; K=kernels/seeds; V=.device/s14/v
KS="--kernel $K/u24_stream_sp.cu --kernel $V/u24_r2.cu --kernel $V/u24_w4r2.cu --kernel $V/u24_w4r2c2.cu --kernel $V/u24_w4r4c2.cu"
for t in u50_4096x4096_fp16 u50_8192x8192_fp16 u50_4096x11008_fp16 u50_11008x4096_fp16 u70_4096x4096_fp16; do
  timeout 80 $SD eval --task $T --name $t $KS --timing-seconds 0.15 --stage-timeout 40 --cache /tmp/c3 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"; grep -E "^candidate|correctness|error|^ +[0-9]+ +[0-9.]+ " $R/$t.txt | sed -E 's/ on task .*//; s/cusparse_csr [0-9.]+ \([0-9.]+x\) *//; s/correctness: //' | paste - - - | cut -c1-150
done
timeout 100 scripts/ncu_profile.sh $SD $T u50_4096x4096_fp16 $K/u24_stream_sp.cu U24StreamKernel $R/ncu_u24 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el) s"; tail -1 $R/ncu.log; grep -E "Duration|Grid Size|Cluster Size|DRAM Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Dynamic Shared" $R/ncu_u24/details.txt | head -10
