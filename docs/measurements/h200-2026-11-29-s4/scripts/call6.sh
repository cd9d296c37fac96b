#!/bin/bash
# Session 4 call 6: GPU tests after the StreamGate refactor (802c649); finalist checks (determinism rerun,
# memcheck, racecheck, initcheck) of pair_mask_tc; pair_mask_tc (default and variants) on the unstructured tasks.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r6; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu_tests > $R/gpu_tests.txt 2>&1
echo "gpu tests rc $? at $(el)s" >> $R/timeline.txt
cd /work/main
SD=$PWD/.device/dist/bin/sparseditto; T=.device/s3/tasks5.yaml; V=.device/s4/v
fin() { timeout 150 $SD eval --task $T --name $1 --kernel kernels/seeds/$2.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf_$1_$2 > $R/fin_$1_$2.txt 2>&1; echo "fin $1 $2 rc $? at $(el)s" >> $R/timeline.txt; }
fin f_u50_fp16 pair_mask_tc &
fin f_u90_bf16 pair_mask_tc &
wait
KS=""; for k in pm3_def pm3_i32 pm3_w8 pm3_s6 pm3_n32; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u50_4096 u70_4096 u90_4096x11008 u90_11008x4096 u90_8192; do
  timeout 100 $SD eval --task .device/s3/tasks2.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt; cat $R/gpu_tests.txt | grep -E "^===|PASSED|FAILED|corpus|H200"
grep -h -E '^candidate|verdict|sanitizer|racecheck|memcheck|initcheck|determin|correctness' $R/fin_*.txt | head -30
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//' | paste -sd' ' | sed 's/pm3_/\n  pm3_/g'; done
