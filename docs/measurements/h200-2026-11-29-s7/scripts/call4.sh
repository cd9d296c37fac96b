#!/bin/bash
# Session 7 call 4: bsr_wgmma with the copy engine (TMA tensor copies of B, bulk copy of the stored A image,
# mbarrier per stage) and its tiling variants vs the cp.async version (w_t128w2) and bsr_mma; finalists.
set -u
cd /work/main
R=/tmp/r4; mkdir -p $R
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
for t in f_b64_fp16_tma f_b64_fp16_odd; do
  timeout 60 $SD eval --task $TK --name $t --kernel $V/t.cu --timing-seconds 0.1 --stage-timeout 50 --cache /tmp/c4 > $R/first_$t.txt 2>&1
  echo "first $t rc $? at $(el)s" >> $R/timeline.txt
done
KS="--kernel kernels/seeds/bsr_mma.cu --kernel $V/w_t128w2.cu"
for k in t t_s3 t_s6 t_256 t_256s5 t_w1; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 b64_90_all_n b64_4096_bf16; do
  [ $(el) -lt 330 ] || break
  timeout 150 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c4 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_bf16_big f_b64_fp16_odd; do
  [ $(el) -lt 470 ] || break
  timeout 80 $SD eval --task $TK --name $t --kernel $V/t.cu --finalist --timing-seconds 0.1 --stage-timeout 75 --cache /tmp/cf > $R/fin_t_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/first*.txt $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -10; done
