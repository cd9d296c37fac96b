#!/usr/bin/env bash
# The fifteenth session's third device call (2026-12-07): the n = 16 stream seeds' declared values one at a time on
# the llm suite's larger shapes (where checks_s15b.sh's `fixed` probe found u14_stream_sp streaming at 2.0 TB/s of
# its bytes against nm24_stream_sp's 2.7: the search's first moves, made by hand), nm24_stream_sp's CTAS_PER_SM = 3
# again (its spill A/B exited 1 with no line in checks_s13b.sh), and ncu's stall reasons for u14_stream_sp at u90
# 4096² n = 16 (the raw metrics checks_s15b.sh's tar left out), u24_stream_sp's RED_BY_SPLITS against its default at
# u70 8192² and 4096×11008 with the GPU test that covers it (package built after 2026-12-07's RED_BY_SPLITS); first, dev/harness_bias/floor.cu (a timed launch's floor).
#   LIMIT=480 bash dev/device_calls/checks_s15c.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
use_package_bins
L=dist/logs15c; mkdir -p $L
ab() { ab_in dist/ab15 $L/ab.txt "$@"; }
y=dev/device_calls/llm_n16.yaml
nvcc -O2 -std=c++17 -arch=sm_90 -o dist/floor dev/harness_bias/floor.cu -lcublas && timeout 60 dist/floor | tee $L/floor.txt  # a timed launch's floor
ab u14_stream_sp $y llm_unstructured90_4096x11008_fp16 WARPS=4 UNROLL=2 UNROLL=6 CTAS_PER_SM=1 SLAB_KB=48
ab u24_stream_sp $y llm_unstructured70_8192x8192_fp16 RED_BY_SPLITS=1 WARPS=4 UNROLL=2 CTAS_PER_SM=1 SLAB_KB=48 THIRDS=0
ab u24_stream_sp $y llm_unstructured70_4096x11008_fp16 RED_BY_SPLITS=1
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"; grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $L/stream_seeds_gpu_test.log | cut -c1-200
if (( $(left) > 80 )); then
  N=dist/ncu15c/u14; timeout 150 scripts/ncu_profile.sh "$SD" dev/device_calls/misses.yaml miss_u90_4096_n16 kernels/seeds/u14_stream_sp.cu U14StreamKernel $N > $L/ncu_u14.log 2>&1
  echo "ncu exit $?"
  python3 dev/device_calls/stalls.py "$N/raw.csv" | tee $L/u14_stalls.txt
  cp "$N/details.txt" $L/ncu_u14_details.txt 2>/dev/null
fi
ab nm24_stream_sp dev/stream_n16/n16.yaml nm24_4096x4096 CTAS_PER_SM=3
ab u14_stream_sp $y llm_unstructured90_8192x8192_fp16 WARPS=4 UNROLL=2 UNROLL=6 CTAS_PER_SM=1 SLAB_KB=48
ab nm24_stream_sp $y llm_nm24_4096x11008_fp16 WARPS=4 UNROLL=2 UNROLL=6 CTAS_PER_SM=2 SLAB_KB=48
tar -C dist -cJf $OUT/logs_s15c.tar.xz logs15c
echo "done, left $(left)s"
