#!/bin/bash
# Session 14 call 2: u24_stream_sp (new, uncommitted) on the u50 n = 16 tasks against dense_cublaslt and the
# cuBLAS baseline; its finalist checks on fin_unstructured85_fp16; ncu of it on u50 4096^2 n 16.
# Carry .device/dist, .device/data.tgz, .device/s14. About 300 s.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r2; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; T=.device/s14/u24_tasks.yaml; K=kernels/seeds
for t in u50_4096x4096_fp16 u50_4096x11008_fp16 u50_11008x4096_fp16 u50_8192x8192_fp16 u50_4096x4096_bf16 u70_4096x4096_fp16; do
  timeout 60 $SD eval --task $T --name $t --kernel $K/u24_stream_sp.cu --kernel $K/dense_cublaslt.cu --kernel $K/pair_mask_tc.cu --timing-seconds 0.15 --stage-timeout 40 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"; grep -E "^candidate|verdict|correctness|error|^ +[0-9]+ +[0-9.]+ " $R/$t.txt | sed -E 's/ on task .*//; s/cusparse_csr [0-9.]+ \([0-9.]+x\) *//' | cut -c1-140
done
timeout 100 $SD eval --task configs/suites/seed_finalists.yaml --name fin_unstructured85_fp16 --kernel $K/u24_stream_sp.cu --finalist --timing-seconds 0.05 --min-trials 5 --stage-timeout 90 --cache /tmp/c2 > $R/fin_u85.txt 2>&1
echo "finalist rc $? at $(el) s"; grep -E "verdict|correctness|sanitizer|determin" $R/fin_u85.txt | head
timeout 120 scripts/ncu_profile.sh $SD $T u50_4096x4096_fp16 $K/u24_stream_sp.cu U24StreamKernel $R/ncu_u24 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el) s"; tail -2 $R/ncu.log; grep -E "Duration|Grid Size|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per" $R/ncu_u24/details.txt | head -10
