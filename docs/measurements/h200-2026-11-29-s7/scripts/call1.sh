#!/bin/bash
# Session 7 call 1: wip/u14-ring (ring of bulk-copied records, RING 4/6/8, CTAS 2/3, SLAB 32/48/96) and
# wip/u14-batch-spread vs main's u14_stream_sp and pair_mask_tc on u90 n=16 and 1:4; wip/nm24-ring vs main's
# nm24_stream_sp on 2:4 n=16/32; finalists of the default ring versions (racecheck on the mbarrier phases).
set -u
cd /work/main
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s7/v; TK=.device/s6/tasks.yaml
KS="--kernel kernels/seeds/u14_stream_sp.cu --kernel kernels/seeds/pair_mask_tc.cu"
for k in ring ring_r4 ring_r6 ring_c3 ring_r6c3 ring_s96 bspread; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 nm14_4096 nm14_4096x11008 u90_4096_bf16; do
  timeout 150 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
NS="--kernel kernels/seeds/nm24_stream_sp.cu"
for k in nring nring_r4 nring_r6 nring_c2 nring_r6c2; do NS="$NS --kernel $V/$k.cu"; done
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192; do
  [ $(el) -lt 420 ] || break
  timeout 120 $SD eval --task .device/s5/tasks.yaml --name $t $NS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
if [ $(el) -lt 480 ]; then
  timeout 70 $SD eval --task $TK --name f_u95_fp16_odd --kernel $V/ring.cu --finalist --timing-seconds 0.1 --stage-timeout 65 --cache /tmp/cf > $R/fin_ring_f_u95_fp16_odd.txt 2>&1
  echo "fin ring rc $? at $(el)s" >> $R/timeline.txt
fi
if [ $(el) -lt 520 ]; then
  timeout 70 $SD eval --task .device/s3/tasks5.yaml --name f_nm24_fp16 --kernel $V/nring.cu --finalist --timing-seconds 0.1 --stage-timeout 65 --cache /tmp/cf > $R/fin_nring_f_nm24_fp16.txt 2>&1
  echo "fin nring rc $? at $(el)s" >> $R/timeline.txt
fi
cat $R/timeline.txt
.device/s7/summ.sh $R/u*.txt $R/nm*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -10; done
