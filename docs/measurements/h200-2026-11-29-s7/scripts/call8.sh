#!/bin/bash
# Session 7 call 8: bench of the llm block-64 rows with bsr_wgmma at 0053017 (staged C store, 3 stages);
# NT 256 at 3 and 4 stages against it on the four block64@90 shapes.
set -u
cd /work/main
R=/tmp/r8; mkdir -p $R
trap 'tar czf $OUT/r8.tgz -C /tmp r8' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
timeout 200 $SD bench --suite configs/suites/llm.yaml --name 'llm_block64_' --seeds kernels/seeds --out $R/llm_block64_bench --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench.txt 2>&1
echo "bench rc $? at $(el)s" >> $R/timeline.txt
KS="--kernel kernels/seeds/bsr_wgmma.cu --kernel $V/c_256.cu --kernel $V/c_256s4.cu"
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192; do
  [ $(el) -lt 260 ] || break
  timeout 60 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 50 --cache /tmp/c8 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
grep -E 'block64_90' $R/llm_block64_bench/bench.txt | grep -E ' 2048 | 16 | 128 ' | sed -E 's/cusparse_csr.*blocked_ell [0-9.]+//'
tail -3 $R/bench.txt
.device/s7/summ.sh $R/b64*.txt
