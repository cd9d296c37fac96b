#!/bin/bash
# Session 11 call 7: first GPU run of wip/nm24-wgmma-sp's seed (nm24_wgmma_sp.cu, copied to .device/s11/w),
# without sanitizers: an awkward 2:4 task, then 4096² at n 128 and 2048, against nm24_mma_sp and dense.
# .device/s11/w held nm24_wgmma_sp.cu as committed in 5a9447a (kernels/seeds/ on main since) and
# nm24_tasks.yaml (here: nm24_wgmma_sp_tasks.yaml).
set -u
cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r7; mkdir -p $R
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
SD=$PWD/.device/dist/bin/sparseditto; W=.device/s11/w
KS="--kernel $W/nm24_wgmma_sp.cu --kernel kernels/seeds/nm24_mma_sp.cu"
for t in awkward_300x520_fp16 awkward_7x96_fp16 nm24_4096x4096_fp16; do
  timeout 60 $SD eval --task $W/nm24_tasks.yaml --name $t $KS --timing-seconds 0.1 --stage-timeout 30 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"
done
for t in awkward_300x520_fp16 awkward_7x96_fp16 nm24_4096x4096_fp16; do echo "## $t"; grep -E "^candidate|verdict|detail|correctness|^ +[0-9]+ +[0-9.]+ " $R/$t.txt | sed -E 's/cusparse_csr.*//' | cut -c1-220; done
