#!/bin/bash
# Session 9 call 4: finalists of the merged bsr_wgmma (9323da5: run records, LPT grid, 512-column wide tile) on
# the wide-tile tasks, then the bench of the llm block rows (96 rows).
set -u
cd /work/main
R=/tmp/r4; mkdir -p $R
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; TK=.device/s9/btasks.yaml
for t in f_b64_wide f_b64_wide_odd; do
  timeout 90 $SD eval --task $TK --name $t --kernel kernels/seeds/bsr_wgmma.cu --finalist --timing-seconds 0.05 --stage-timeout 80 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 330 $SD bench --suite configs/suites/llm.yaml --name 'llm_block' --seeds kernels/seeds --out $R/llm_block_bench --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench.txt 2>&1
echo "bench rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
grep -E 'block64_90' $R/llm_block_bench/bench.txt | sed -E 's/cusparse_csr.*blocked_ell [0-9.]+//'
tail -4 $R/bench.txt
