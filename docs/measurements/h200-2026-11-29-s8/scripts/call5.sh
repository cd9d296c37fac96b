#!/bin/bash
# Session 8 call E: the dense seed with cuBLAS's default math mode (as the cublas_dense baseline) against the
# committed one (reduced-precision split-K reductions disallowed), unstructured 50%; finalists of the variant.
set -u
cd /work/main
R=/tmp/r5; mkdir -p $R
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v5; TK=configs/suites/llm.yaml
for t in llm_unstructured50_4096x4096_fp16 llm_unstructured50_4096x11008_fp16 llm_unstructured50_11008x4096_fp16 llm_unstructured50_8192x8192_fp16 llm_unstructured50_4096x4096_bf16; do
  timeout 90 $SD eval --task $TK --name $t --kernel kernels/seeds/dense_cublas.cu --kernel $V/dense_default.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_u50_fp16_odd f_u50_bf16; do
  [ $(el) -lt 400 ] || break
  timeout 90 $SD eval --task .device/s8/ftasks.yaml --name $t --kernel $V/dense_default.cu --finalist --timing-seconds 0.1 --stage-timeout 80 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/llm*.txt
grep -h -E "max rel|correctness" $R/llm*.txt | head -12
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
