#!/bin/bash
# Session 5 call 6: pair_mask_tc with more K splits (ITEMS_PER_SM 24/32) and fewer warps or stages per CTA on
# the u90 shapes; bsr_mma with two stages (more CTAs per SM) on block 64 at 90%, n=2048.
set -u
cd /work/main
R=/tmp/r6; mkdir -p $R
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s5/v
KS=""; for k in pm_base pm_i24 pm_i32 pm_i32w8 pm_i32s3; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192; do
  timeout 110 $SD eval --task .device/s3/tasks2.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
KS=""; for k in bsr_base bsr_st2 bsr_st2w8; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096 b64_8192; do
  timeout 110 $SD eval --task .device/s5/tasks.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/u*.txt $R/b64*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (pm_|bsr_)/\n  \1/g'; done
