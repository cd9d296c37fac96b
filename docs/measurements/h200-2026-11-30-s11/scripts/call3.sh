#!/bin/bash
# Session 11 call 3, from main at .device/dist/BUILT_FROM (carry .device/dist, .device/data.tgz, .device/s11):
# 1. GPU tests at the head (runner records host_idle_quickest_ms; the shared-GPU rule is relative).
# 2. bench of the llm suite's 2:4 rows (fp16 and bf16) and block 64 @ 90% rows under the current runner
#    (whole-GPU gate, per-trial escaped-work rule), with the shared-GPU flag that now means something.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r3; mkdir -p $R
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
cat .device/dist/BUILT_FROM
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200|warning"
echo "gpu tests done at $(el) s"
SD=$PWD/.device/dist/bin/sparseditto
B="--timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/c3"
timeout 150 $SD bench --suite configs/suites/llm.yaml --name nm24 --out $R/bench_nm24 $B > $R/bench_nm24.log 2>&1
echo "bench nm24 rc $? at $(el) s"
timeout 150 $SD bench --suite configs/suites/llm.yaml --name block64_90 --out $R/bench_b64_90 $B > $R/bench_b64_90.log 2>&1
echo "bench b64_90 rc $? at $(el) s"
for d in $R/bench_nm24 $R/bench_b64_90; do echo "## $d"; cut -c1-200 $d/bench.txt 2>/dev/null; done
tail -3 $R/bench_*.log
