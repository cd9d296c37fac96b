#!/bin/bash
# Session 7 call 6: bsr_wgmma 4-byte paired C stores (x_pair) vs the committed seed; ncu of the committed seed's
# TMA kernel at block 64 @ 90% 4096x4096 n=2048.
set -u
cd /work/main
R=/tmp/r6; mkdir -p $R
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s7/btasks.yaml
KS="--kernel kernels/seeds/bsr_wgmma.cu --kernel $V/x_pair.cu"
for t in b64_4096 b64_4096x11008 b64_11008x4096 b64_8192 f_b64_fp16_odd; do
  timeout 100 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 240 scripts/ncu_profile.sh $SD $TK b64_4096 kernels/seeds/bsr_wgmma.cu BsrWgmmaTmaKernel $R/ncu_bsr_wgmma_b64_4096_n2048 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
.device/s7/summ.sh $R/b64*.txt $R/f_*.txt
tail -5 $R/ncu.log
ls $R/ncu_bsr_wgmma_b64_4096_n2048 2>/dev/null
f=$(ls $R/ncu_bsr_wgmma_b64_4096_n2048/*details* 2>/dev/null | head -1); [ -n "$f" ] && grep -E 'Duration|Throughput|Occupancy|Registers|Shared Memory Config|Block Limit|Warp Cycles|L2 Hit|Executed Ipc|Stall|One or More|No Eligible' "$f" | head -40
