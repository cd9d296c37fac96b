#!/bin/bash
# Session 8 call C: (1) is an eval's candidate order biased? la3 (same behaviour as old) first, old, old2
# (old + a comment) on the wide-tile tasks; (2) bsr_wgmma's deep tile (DEEP_STAGES 3 = off, 4, 5, 6) and
# SMALL_STAGES 6, 8 on n <= 256; finalists of d4.
set -u
cd /work/main
R=/tmp/r3; mkdir -p $R
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v3; TK=.device/s8/btasks.yaml
for t in b64_4096x11008 b64_8192; do
  timeout 100 $SD eval --task $TK --name $t --kernel $V/la3.cu --kernel $V/old.cu --kernel $V/old2.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/order_$t.txt 2>&1
  echo "order $t rc $? at $(el)s" >> $R/timeline.txt
done
KS=""; for k in d3 d4 d5 d6 s6 s8 d3b; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096_small_n b64_11008x4096_small_n b64_80_4096_bf16_small_n b64_90_all_n b64_80_all_n; do
  [ $(el) -lt 330 ] || break
  timeout 120 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/deep_$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_fp16_odd; do
  [ $(el) -lt 470 ] || break
  timeout 90 $SD eval --task $TK --name $t --kernel $V/d4.cu --finalist --timing-seconds 0.1 --stage-timeout 80 --cache /tmp/cf > $R/fin_${t}_d4.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/order_*.txt $R/deep_*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
