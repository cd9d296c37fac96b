#!/bin/bash
# Session 11 call 2, from main at .device/dist/BUILT_FROM (carry .device/dist, .device/data.tgz, .device/s11):
# 1. Idle trials (median, quickest) on a quiet H200 and with 8 evals at once, under the whole-GPU gate:
#    the data behind common/shared_gpu.h's relative rule.
# 2. The tiny search again: the revision stamp and no shared-GPU warning on a lone search.
# 3. ncu on bsr_wgmma (block 64 @ 90%, 4096², n 2048) and nm24_stream_sp (2:4, 4096², n 16): the two
#    targets nearest the line; what binds them.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r2; mkdir -p $R
trap 'rm -f $R/ncu_*/full.ncu-rep; tar czf $OUT/r2.tgz -C /tmp r2' EXIT
cat .device/dist/BUILT_FROM
SD=$PWD/.device/dist/bin/sparseditto; TK=.device/s11/tasks.yaml; K=kernels/seeds/csr_warp_per_row.cu
$SD --version
# Warm the compile cache so the evals below only time.
timeout 120 $SD eval --task $TK --name idle_u85 --kernel $K --cache /tmp/c2 --timing-seconds 0.05 > $R/warm.txt 2>&1
echo "warm rc $? at $(el) s"
for i in 1 2; do
  timeout 60 $SD eval --task $TK --name idle_u85 --kernel $K --cache /tmp/c2 --json $R/quiet$i.json > $R/quiet$i.txt 2>&1
done
echo "quiet done at $(el) s"
for i in 1 2 3 4 5 6 7 8; do
  timeout 120 $SD eval --task $TK --name idle_u85 --kernel $K --cache /tmp/c2 --json $R/shared$i.json > $R/shared$i.txt 2>&1 &
done
wait
echo "shared x8 done at $(el) s"
python3 .device/s11/idle.py $R/quiet*.json $R/shared*.json
grep -h "warning" $R/quiet*.txt $R/shared*.txt | sort | uniq -c | head
timeout 200 $SD search .device/s11/tiny_search.yaml --run s11b --runs-dir /tmp/runs --finalists 1 > $R/search.txt 2>&1
echo "search rc $? at $(el) s"; cat $R/search.txt | tail -4
$SD status s11b --runs-dir /tmp/runs > $R/status.txt 2>&1; head -3 $R/status.txt
timeout 150 scripts/ncu_profile.sh $SD $TK b64_4096 kernels/seeds/bsr_wgmma.cu BsrWgmma $R/ncu_bsr_wgmma_b64_4096 > $R/ncu1.log 2>&1
echo "ncu bsr rc $? at $(el) s"
timeout 150 scripts/ncu_profile.sh $SD $TK nm24_4096 kernels/seeds/nm24_stream_sp.cu Nm24StreamKernel $R/ncu_nm24_4096_n16 > $R/ncu2.log 2>&1
echo "ncu nm24 rc $? at $(el) s"
for d in $R/ncu_*; do echo "## $d"; grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Registers Per|Executed Ipc A|Grid Size|Block Size|No Eligible|Warp Cycles Per Issued|Waves Per SM" $d/details.txt | head -20; done
