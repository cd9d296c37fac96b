#!/usr/bin/env bash
# The twelfth session's second device call (2026-12-07): u24_stream_sp's new plan choice (PickPlan: the widest plan
# that runs in one wave with its residual staged, else the widest) through plan_probe, the stream seeds' GPU test,
# the LLM suite's u70 fp16 tasks re-benched (u24's rows under the new plan), then ncu_misses.sh SET=s12 (the
# missed rows still without a profile) in the time left. Package first (README), carry dist/gpu_*.tar.xz.
#   LIMIT=560 bash dev/device_calls/checks_s12.sh
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -o $L/plan_probe dev/u24_plan/plan_probe.cu && timeout 90 $L/plan_probe | tee $L/u24_plan.txt | grep -E "prepare chose|cap"
use_package_bins
timeout 150 build/bin/stream_seeds_gpu_test > $L/stream_seeds.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ +(OK|FAILED|PASSED) " $L/stream_seeds.log | head
tar -C dist -cJf $OUT/logs.tar.xz logs
LIMIT=$(( ${LIMIT:-560} - 240 )) bench_slice configs/suites/llm.yaml '^llm_unstructured70_.*_fp16$' dist/bench_u70_s12 --timing-seconds 0.3
grep -E "^llm_unstructured70" dist/bench_u70_s12/bench.txt | cut -c1-140
LIMIT=$(left) SET=s12 bash dev/device_calls/ncu_misses.sh
echo "done, left $(left)s"
