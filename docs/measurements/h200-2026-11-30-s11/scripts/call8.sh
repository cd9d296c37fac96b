#!/bin/bash
# Session 11 call 8: nm24_wgmma_sp (wip/nm24-wgmma-sp) on the other llm 2:4 shapes at n 128 and 2048, no sanitizers.
# .device/s11/w held nm24_wgmma_sp.cu as committed in 5a9447a (kernels/seeds/ on main since) and
# nm24_tasks.yaml (here: nm24_wgmma_sp_tasks.yaml).
set -u
cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r8; mkdir -p $R
trap 'tar czf $OUT/r8.tgz -C /tmp r8' EXIT
SD=$PWD/.device/dist/bin/sparseditto; W=.device/s11/w
KS="--kernel $W/nm24_wgmma_sp.cu"
for t in nm24_4096x11008_fp16 nm24_11008x4096_fp16 nm24_8192x8192_fp16 nm24_4096x4096_bf16; do
  timeout 60 $SD eval --task $W/nm24_tasks.yaml --name $t $KS --timing-seconds 0.1 --stage-timeout 30 --cache /tmp/c8 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s"
done
for t in nm24_4096x11008_fp16 nm24_11008x4096_fp16 nm24_8192x8192_fp16 nm24_4096x4096_bf16; do echo "## $t"; grep -E "^candidate|verdict|detail|correctness|^ +[0-9]+ +[0-9.]+ " $R/$t.txt | sed -E 's/cusparse_csr.*//' | cut -c1-220; done
