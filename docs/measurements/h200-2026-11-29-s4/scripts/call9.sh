#!/bin/bash
# Session 4 call 9: pair_mask_tc with balanced K splits (default ITEMS_PER_SM 16 and 32) on the u90/u70/u50 n=16 tasks.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r9; mkdir -p $R
trap 'tar czf $OUT/r9.tgz -C /tmp r9' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s4/v
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u50_4096 u70_4096; do
  timeout 100 $SD eval --task .device/s3/tasks2.yaml --name $t --kernel $V/pm4_def.cu --kernel $V/pm4_i32.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c9 > $R/$t.txt 2>&1
done
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//' | paste -sd' ' | sed 's/pm4_/\n  pm4_/g'; done
