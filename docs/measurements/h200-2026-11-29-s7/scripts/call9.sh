#!/bin/bash
# Session 7 call 9: bsr_wgmma with the wide tile (NT 256, 4 stages) for n >= 1024 on long block-rows (wide)
# vs the committed seed (head); bench of the llm block64@90 rows with the wide version.
set -u
cd /work/main
R=/tmp/r9; mkdir -p $R
trap 'tar czf $OUT/r9.tgz -C /tmp r9' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
KS="--kernel $V/head.cu --kernel $V/wide.cu"
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 b64_80_all_n; do
  timeout 50 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 40 --cache /tmp/c9 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
if [ $(el) -lt 90 ]; then
  timeout 75 $SD bench --suite configs/suites/llm.yaml --name 'llm_block64_90_' --seeds kernels/seeds --out $R/llm_block64_90_bench --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench.txt 2>&1
  echo "bench rc $? at $(el)s" >> $R/timeline.txt
fi
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt
grep -E ' 2048 ' $R/llm_block64_90_bench/bench.txt 2>/dev/null | sed -E 's/cusparse_csr.*blocked_ell [0-9.]+//'
tail -3 $R/bench.txt
