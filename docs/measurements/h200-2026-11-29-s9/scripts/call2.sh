#!/bin/bash
# Session 9 call 2 (prepared in session 8): wip/dense-bind-once against main's dense seed (and a copy of it,
# for the spread) on the unstructured-50% rows, where the dense seed is the best and 1-4% behind the
# cublas_dense baseline at n = 16; its finalist. Results go to $OUT.
set -u
cd /work/main
R=$OUT/r2; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s9/v; TK=configs/suites/llm.yaml
for t in llm_unstructured50_4096x4096_fp16 llm_unstructured50_4096x11008_fp16 llm_unstructured50_11008x4096_fp16 llm_unstructured50_8192x8192_fp16; do
  timeout 60 $SD eval --task $TK --name $t --kernel $V/dense_bind_once.cu --kernel kernels/seeds/dense_cublas.cu --kernel $V/dense_main_copy.cu --timing-seconds 0.2 --stage-timeout 40 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 70 $SD eval --task .device/s9/ftasks.yaml --name f_u50_fp16_odd --kernel $V/dense_bind_once.cu --finalist --timing-seconds 0.05 --stage-timeout 60 --cache /tmp/cf > $R/fin_f_u50_fp16_odd.txt 2>&1
echo "fin rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
.device/s7/summ.sh $R/llm*.txt
grep -E 'verdict|detail|exited|correctness' $R/fin_*.txt | head -8
