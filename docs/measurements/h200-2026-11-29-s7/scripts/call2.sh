#!/bin/bash
# Session 7 call 2: bsr_wgmma (block 64, wgmma m64n64k16 from 128-byte-swizzled shared memory, sm_90a) and
# its tiling variants vs bsr_mma on block 64 tasks; finalists of the default on odd / bf16 shapes.
set -u
cd /work/main
R=/tmp/r2; mkdir -p $R
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
# correctness first, small: the default on the odd shapes (a wrong descriptor shows here in seconds)
timeout 60 $SD eval --task $TK --name f_b64_fp16_odd --kernel $V/w.cu --timing-seconds 0.1 --stage-timeout 50 --cache /tmp/c2 > $R/first_f_b64_fp16_odd.txt 2>&1
echo "first rc $? at $(el)s" >> $R/timeline.txt
KS="--kernel kernels/seeds/bsr_mma.cu"
for k in w w_s3 w_s5 w_t128 w_t128w2 w_t256w1; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 b64_90_all_n b64_80_all_n b64_4096_bf16; do
  [ $(el) -lt 400 ] || break
  timeout 150 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_odd f_b64_bf16_big; do
  [ $(el) -lt 480 ] || break
  timeout 80 $SD eval --task $TK --name $t --kernel $V/w.cu --finalist --timing-seconds 0.1 --stage-timeout 75 --cache /tmp/cf > $R/fin_w_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/first*.txt $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -10; done
