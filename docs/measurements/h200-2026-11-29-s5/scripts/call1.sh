#!/bin/bash
# Session 5 call 1: nm24_stream_sp (new small-n 2:4 seed) and variants vs nm24_mma_sp and dense on the 2:4 tasks;
# finalist checks (determinism, memcheck, racecheck, initcheck) of nm24_stream_sp.
set -u
cd /work/main
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > $R/gpu.txt
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s5/v
KS=""; for k in ns_def ns_u4 ns_c1 ns_w4 ns_w4c3u4; do KS="$KS --kernel $V/$k.cu"; done
KS="$KS --kernel kernels/seeds/nm24_mma_sp.cu --kernel kernels/seeds/dense_cublas.cu"
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192 nm24_4096_bf16; do
  timeout 110 $SD eval --task .device/s5/tasks.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 170 $SD eval --task .device/s3/tasks5.yaml --name f_nm24_fp16 --kernel kernels/seeds/nm24_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 160 --cache /tmp/cf > $R/fin_nm24_stream_sp.txt 2>&1
echo "fin rc $? at $(el)s" >> $R/timeline.txt
cat $R/gpu.txt $R/timeline.txt
grep -h -E '^candidate|verdict|sanitizer|racecheck|memcheck|initcheck|determin|correctness|error|rror' $R/fin_*.txt | head -30
for f in $R/nm24*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//' | paste -sd' ' | sed -E 's/ (ns_|nm24_mma|dense_cub)/\n  \1/g'; done
