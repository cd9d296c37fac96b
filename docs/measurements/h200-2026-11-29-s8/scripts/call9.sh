#!/bin/bash
# Session 8 call I: call H again after the static screen refused ws (a default argument in MbarInit's
# parameter list made the screen take the function for a variable): ws against main on the four block-64
# shapes, then finalists of ws (the small and deep tiles; the 3-stage 128-column tile). Results go to $OUT.
set -u
cd /work/main
R=$OUT/r9; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v8; TK=.device/s8/btasks.yaml
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192; do
  timeout 40 $SD eval --task $TK --name $t --kernel $V/ws.cu --kernel $V/main.cu --timing-seconds 0.2 --stage-timeout 30 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_big; do
  [ $(el) -lt 110 ] || break
  timeout 55 $SD eval --task $TK --name $t --kernel $V/ws.cu --finalist --timing-seconds 0.05 --stage-timeout 50 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
