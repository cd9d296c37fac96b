#!/bin/bash
# Session 4 call 2: the new pair_mask_tc seed (default + tunable variants) on the unstructured targets.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r2; mkdir -p $R
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s4/v; T=.device/s3/tasks2.yaml
KS=""; for k in pm_def pm_w4 pm_s6 pm_i32 pm_i8 pm_n64; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u50_4096 u70_4096 u90_4096x11008 u90_11008x4096 u90_8192; do
  timeout 150 $SD eval --task $T --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |rror|wrong|mismatch' $f | sed 's/(NVIDIA H200, sm_90)//; s/on task.*//' | head -40; done
