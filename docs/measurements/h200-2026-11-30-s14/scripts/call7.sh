#!/bin/bash
# Session 14 call 7: dense_stream (new: nm24_stream_sp's stream with the dense m16n8k16 mma, A densified) and
# four tunable variants (.device/s14/v) against dense_cublaslt and the cuBLAS baseline on the u50 n = 16 tasks
# (the llm suite's matrices) and u70 4096^2; finalist checks of the default on two fin tasks.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r7; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; T=.device/s14/u24_tasks.yaml; K=kernels/seeds; V=.device/s14/v
KS="--kernel $K/dense_stream.cu --kernel $V/ds_u4.cu --kernel $V/ds_c2.cu --kernel $V/ds_u1c2.cu --kernel $V/ds_w4c2.cu --kernel $K/dense_cublaslt.cu"
for t in u50_4096x4096_fp16 u50_4096x11008_fp16 u50_11008x4096_fp16 u50_8192x8192_fp16 u50_4096x4096_bf16 u70_4096x4096_fp16; do
  timeout 80 $SD eval --task $T --name $t $KS --timing-seconds 0.15 --stage-timeout 40 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"; grep -E "^candidate|correctness|error|^ +[0-9]+ +[0-9.]+ " $R/$t.txt | sed -E 's/ on task .*//; s/cusparse_csr [0-9.]+ \([0-9.]+x\) *//; s/correctness: //; s/, max abs error.*//; s/candidate //' | paste - - - | cut -c1-110
done
for f in fin_unstructured85_fp16 fin_block64_80_bf16; do
  timeout 100 $SD eval --task configs/suites/seed_finalists.yaml --name $f --kernel $K/dense_stream.cu --finalist --timing-seconds 0.05 --min-trials 5 --stage-timeout 90 --cache /tmp/c7 > $R/fin_$f.txt 2>&1
  echo "finalist $f rc $? at $(el) s"; grep -E "verdict|correctness|sanitizer|determin" $R/fin_$f.txt | head
done
