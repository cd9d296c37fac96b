#!/bin/bash
# Session 8 call G: ncu of the committed bsr_wgmma at n = 2048 on 4096x11008 (the wide tile) and 4096²
# (the 128-column tile, 3 stages), block 64 at 90%.
set -u
cd /work/main
R=/tmp/r7; mkdir -p $R
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; TK=.device/s8/btasks.yaml
for t in b64_4096x11008 b64_4096; do
  [ $(el) -lt 200 ] || break
  timeout 150 scripts/ncu_profile.sh $SD $TK $t kernels/seeds/bsr_wgmma.cu BsrWgmmaTmaKernel $R/ncu_$t > $R/ncu_$t.log 2>&1
  echo "ncu $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for t in b64_4096x11008 b64_4096; do echo "## $t"; grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Grid Size|Waves Per SM|Block Limit|Executed Ipc A" $R/ncu_$t/details.txt | head -24; done
