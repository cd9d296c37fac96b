#!/bin/bash
# Session 8 call A: GPU tests on main's head package, then call1's evals (time-guarded).
set -u
cd /work/main 2>/dev/null || cd "$(dirname "$0")/../.."
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
scripts/device_run.sh .device/dist .device/data /work/main $R/gpu_tests > $R/gpu_tests.txt 2>&1
echo "gpu tests rc $? at $(el)s" >> $R/timeline.txt
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v; TK=.device/s8/btasks.yaml
KS="--kernel kernels/seeds/bsr_wgmma.cu --kernel $V/wgmma_lpt.cu --kernel kernels/seeds/bsr_mma.cu --kernel $V/mma_staged.cu"
for t in b64_4096 b64_4096x11008 b64_8192 b64_11008x4096 b64_90_all_n b64_80_all_n; do
  [ $(el) -lt 470 ] || break
  timeout 90 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in b32_90_4096 b32_80_8192; do
  [ $(el) -lt 500 ] || break
  timeout 80 $SD eval --task $TK --name $t --kernel kernels/seeds/bsr_mma.cu --kernel $V/mma_staged.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/gpu_tests.txt; cat $R/timeline.txt
.device/s7/summ.sh $R/b*.txt
