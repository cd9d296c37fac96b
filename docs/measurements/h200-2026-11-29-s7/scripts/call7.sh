#!/bin/bash
# Session 7 call 7: bsr_wgmma with the C tile staged in shared memory and stored in 16-byte row chunks (s) and
# its tiling variants vs x_pair (4-byte paired stores from the fragments); finalists of s; ncu of s.
set -u
cd /work/main
R=/tmp/r7; mkdir -p $R
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
KS="--kernel $V/x_pair.cu"
for k in s s_w1 s_256 s_s3 s_s5; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 b64_90_all_n b64_80_all_n; do
  timeout 100 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_b64_fp16_tma f_b64_bf16_big; do
  [ $(el) -lt 300 ] || break
  timeout 80 $SD eval --task $TK --name $t --kernel $V/s.cu --finalist --timing-seconds 0.1 --stage-timeout 75 --cache /tmp/cf > $R/fin_s_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
[ $(el) -lt 380 ] && timeout 120 scripts/ncu_profile.sh $SD $TK b64_4096 $V/s.cu BsrWgmmaTmaKernel $R/ncu_s_b64_4096_n2048 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -10; done
tail -2 $R/ncu.log
f=$R/ncu_s_b64_4096_n2048/details.txt; [ -f "$f" ] && grep -E 'Duration|Throughput|Achieved Occupancy|L2 Hit|Executed Ipc Active|Warp Cycles Per Issued' "$f" | head -14
