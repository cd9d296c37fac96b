#!/bin/bash
# Session 9 call 1 (prepared in session 8): wip/bsr-wgmma-prologue (one run-record load a CTA, col_idx read one
# issue ahead; 1-D longest-first grid at <= 3 waves; prologue_nolpt without that grid) against main's bsr_wgmma on the block-64 shapes and n; wide512 = the wide tile as 512 columns,
# 4 warpgroups, 3 stages (A reloads halved; one CTA an SM), alone and with the prologue change; finalists of
# the prologue branch (add wide512's on f_b64_wide if it wins). Results go to $OUT.
set -u
cd /work/main
R=$OUT/r1; mkdir -p $R
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s9/v; TK=.device/s9/btasks.yaml
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 b64_90_all_n b64_4096_small_n b64_80_all_n; do
  timeout 90 $SD eval --task $TK --name $t --kernel $V/prologue.cu --kernel $V/prologue_nolpt.cu --kernel kernels/seeds/bsr_wgmma.cu --kernel $V/prologue_copy.cu --kernel $V/wide512.cu --kernel $V/prologue_wide512.cu --timing-seconds 0.2 --stage-timeout 40 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_fp16_odd f_b64_big f_b64_wide; do
  [ $(el) -lt 330 ] || break
  timeout 70 $SD eval --task $TK --name $t --kernel $V/prologue.cu --finalist --timing-seconds 0.05 --stage-timeout 60 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
tar czf $OUT/r1.tgz -C $OUT r1 && rm -rf $R
