#!/bin/bash
# Session 8 call H: bsr_wgmma with a producer warp and empty/full mbarriers (ws, wip/bsr-wgmma-ws) against
# main's; finalists of ws (racecheck on the new synchronisation). Results go straight to $OUT.
set -u
cd /work/main
R=$OUT/r8; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v8; TK=.device/s8/btasks.yaml
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192; do
  timeout 40 $SD eval --task $TK --name $t --kernel $V/ws.cu --kernel $V/main.cu --timing-seconds 0.2 --stage-timeout 30 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_bf16_big f_b64_wide; do
  [ $(el) -lt 170 ] || break
  timeout 60 $SD eval --task $TK --name $t --kernel $V/ws.cu --finalist --timing-seconds 0.05 --stage-timeout 55 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
for t in b64_90_all_n b64_4096_small_n b64_80_all_n; do
  [ $(el) -lt 215 ] || break
  timeout 30 $SD eval --task $TK --name $t --kernel $V/ws.cu --kernel $V/main.cu --timing-seconds 0.15 --stage-timeout 25 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
