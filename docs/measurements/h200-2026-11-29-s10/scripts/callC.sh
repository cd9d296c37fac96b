#!/bin/bash
# Session 10 call C, from main (cf13ad3, .device/dist): (1) quiet GPU: wip/bsr-wgmma-persistent's kernel
# (v/persistent.cu; persistent_direct.cu: C stored from the fragments; persistent_off.cu: PERSISTENT 0)
# against main's bsr_wgmma on the multi-wave block-64 shapes; (2) shared GPU, 9 finalist evals at once:
# the persistent kernel's three finalist tasks, and the six seed pairs call B did not reach (main's
# runner: per-trial escaped-work rule with the one-CTA gate).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/rC; mkdir -p $R/fin
trap 'tar czf $OUT/rC.tgz -C /tmp rC' EXIT
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s10/v; TK=.device/s10/btasks.yaml
for t in b64_4096 b64_11008x4096 b64_4096_bf16 b64_90_all_n b64_4096_small_n; do
  timeout 80 $SD eval --task $TK --name $t --kernel $V/persistent.cu --kernel $V/persistent_direct.cu --kernel $V/persistent_off.cu --kernel kernels/seeds/bsr_wgmma.cu --kernel $V/persistent.cu --timing-seconds 0.2 --stage-timeout 40 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
.device/s10/summ.sh $R/b64*.txt
pids=()
for t in f_b64_persist f_b64_persist_empty_rows f_b64_fp16_tma; do
  timeout 200 $SD eval --task $TK --name $t --kernel $V/persistent.cu --finalist --timing-seconds 0.05 --stage-timeout 120 --cache /tmp/cf_$t > $R/fin/persistent__$t.txt 2>&1 < /dev/null &
done
while IFS=$'\t' read -r task seed file; do
  timeout 200 $SD eval --task configs/suites/seed_finalists.yaml --name $task --kernel kernels/seeds/$seed.cu --finalist --timing-seconds 0.05 --min-trials 5 --stage-timeout 120 --cache /tmp/cs_$seed > $R/fin/${seed}__$task.txt 2>&1 < /dev/null &
done < .device/s10/rest_pairs.tsv
wait
echo "finalists done at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
for f in $R/fin/*.txt; do printf '%-48s ' $(basename $f .txt); grep -E "verdict:" $f | head -1 | tr -s ' ' | tr -d '\n'; echo " sanitizers-ok=$(grep -c 'exited with code 0' $f)"; grep -E "detail:|escaped|idle trial took" $f | head -2; done
