#!/bin/bash
# Session 5 call 5: the streamed sparse operand read with an L2 evict-first policy (createpolicy + cache_hint)
# against the committed seeds: nm24_stream_sp (nse), pair_mask_tc (pme: records' cp.async), csr_packed_rows
# (cpe: the row groups' loads).
set -u
cd /work/main
R=/tmp/r5; mkdir -p $R
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s5/v
KS="--kernel $V/ns_base.cu --kernel $V/nse.cu"
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192; do
  timeout 110 $SD eval --task .device/s5/tasks.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c5 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
KS="--kernel $V/pm_base.cu --kernel $V/pme.cu --kernel $V/cp_base.cu --kernel $V/cpe.cu"
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u50_4096 u70_4096; do
  timeout 110 $SD eval --task .device/s3/tasks2.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c5 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/nm24*.txt $R/u*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (ns_base|nse|pm_base|pme|cp_base|cpe) /\n  \1 /g'; done
