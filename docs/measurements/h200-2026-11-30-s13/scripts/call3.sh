#!/bin/bash
# Session 13 call 3: dense_cublaslt tunables (ALGOS 16, TIMED_REPS 9, workspace 64 MiB) against the default
# and dense_cublas on the u50 fp16 rows, 0.3 s of timing per n. Carry .device/dist, .device/s13.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r3; mkdir -p $R; trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; $SD --version; V=.device/s13/variants; K=kernels/seeds
for s in 4096x4096 4096x11008 11008x4096 8192x8192; do
  timeout 110 $SD eval --task configs/suites/llm.yaml --name llm_unstructured50_${s}_fp16 --kernel $K/dense_cublas.cu --kernel $K/dense_cublaslt.cu --kernel $V/lt_a16.cu --kernel $V/lt_r9.cu --kernel $V/lt_a16r9.cu --kernel $V/lt_a16w64.cu --timing-seconds 0.3 --stage-timeout 40 --cache /tmp/c3 > $R/u50_$s.txt 2>&1
  echo "u50 $s rc $? at $(el) s"; grep -E "^candidate|^ +[0-9]+ +[0-9.]+ " $R/u50_$s.txt | sed -E 's/cusparse_csr [0-9.]+ \([0-9.]+x\) *//' | cut -c1-100 | paste - - - - | sed -E 's/ +/ /g'
done
