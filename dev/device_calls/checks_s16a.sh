#!/usr/bin/env bash
# The sixteenth session's second device call (2026-12-08), after the stream seeds' reduction slots came to be sized
# by the split count (5d0bc31) and u14_stream_sp gained SLAB_FIRST: their GPU test, SLAB_FIRST against its default,
# the SASS of the stream seeds' kernels (the PTX census's instruction
# counts, now as the GPU runs them), u24_stream_sp's and u14_stream_sp's declared values one at a time on the shapes
# checks_s15c.sh did not try, the finalist sanitizers over the stream seeds and their every-path variants, then the
# llm suite's n = 16 rows re-benched (resumable: dist/bench_llm_n16_s16).
#   LIMIT=560 bash dev/device_calls/checks_s16a.sh      (carry dist/gpu_*.tar.xz built at or after 5d0bc31)
set -uo pipefail
source dev/device_calls/setup.sh
mkdir -p build/bin && cp -f dist/gpu/bin/* build/bin/ && ln -sfn "$here/dist/gpu/lib" build/lib
L=dist/logs16a; mkdir -p $L $OUT/sass
ab() { dev/tunable_sweep/ab.sh "$SD" dist/ab16 $(( $(left) - 30 < 80 ? $(left) - 30 : 80 )) "$@" | tee -a $L/ab.txt; }
y=dev/device_calls/llm_n16.yaml
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $L/stream_seeds_gpu_test.log | cut -c1-200
for s in u14_stream_sp nm24_stream_sp u24_stream_sp; do  # SASS as the GPU runs it (this machine has cuobjdump)
  nvcc -std=c++17 -O3 -cubin -Ikernel_abi -gencode arch=compute_90a,code=sm_90a -o dist/$s.cubin kernels/seeds/$s.cu &&
    cuobjdump -sass dist/$s.cubin > $OUT/sass/$s.sass && echo "sass $s: $(wc -l < $OUT/sass/$s.sass) lines"
done
# The three seeds' SLAB_FIRST (new, default 0): the slab's first tiles as their own group, compute starting once they land.
ab u14_stream_sp $y llm_unstructured90_8192x8192_fp16 SLAB_FIRST=8 SLAB_FIRST=16 SLAB_FIRST=4
ab u14_stream_sp $y llm_unstructured90_4096x11008_fp16 SLAB_FIRST=8 SLAB_FIRST=16
ab u14_stream_sp $y llm_unstructured90_11008x4096_fp16 SLAB_FIRST=8 SLAB_FIRST=16
ab nm24_stream_sp $y llm_nm24_8192x8192_fp16 SLAB_FIRST=8 SLAB_FIRST=16
ab nm24_stream_sp $y llm_nm24_4096x11008_fp16 SLAB_FIRST=8
ab u24_stream_sp $y llm_unstructured70_8192x8192_fp16 SLAB_FIRST=8 SLAB_FIRST=16
# ncu at the large shape (8192², where u14 misses 2.0x by the most and u24 1.3x): stall reasons and the SASS with its
# stall samples (the source page), to see which instructions the warps wait at.
prof() {  # seed kernel_regex task tag
  local N=dist/ncu16a/$4
  timeout 150 scripts/ncu_profile.sh "$SD" $y $3 kernels/seeds/$1.cu $2 $N > $L/ncu_$4.log 2>&1; echo "ncu $4 exit $?"
  python3 dev/device_calls/stalls.py "$N/raw.csv" | tee $L/stalls_$4.txt
  cp "$N/details.txt" $L/ncu_$4_details.txt 2>/dev/null
  ncu --import "$N/full.ncu-rep" --page source --csv --print-source sass > $L/source_$4.csv 2>&1; echo "source page: $(wc -l < $L/source_$4.csv) lines"
}
(( $(left) > 400 )) && prof u14_stream_sp U14StreamKernel llm_unstructured90_8192x8192_fp16 u14_8192
(( $(left) > 330 )) && prof u24_stream_sp U24StreamKernel llm_unstructured70_8192x8192_fp16 u24_8192
ab u24_stream_sp $y llm_unstructured70_4096x11008_fp16 THIRDS=24 WARPS=4 UNROLL=2 CTAS_PER_SM=1 SLAB_KB=48
ab u24_stream_sp $y llm_unstructured70_11008x4096_fp16 THIRDS=24 UNROLL=2 CTAS_PER_SM=1 SLAB_KB=48
ab u24_stream_sp $y llm_unstructured70_4096x4096_fp16 THIRDS=24 UNROLL=2 CTAS_PER_SM=1
if (( $(left) > 260 )); then  # the stream seeds as now defaulted and with every path on, through the finalist sanitizers
  dev/tunable_sweep/path_variants.sh dist/finalist_seeds
  SEEDS_DIR=dist/finalist_seeds timeout 200 scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
  cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200; cp dist/finalists/summary.txt $L/finalists.txt 2>/dev/null
fi
LIMIT=$(( ${LIMIT:-560} - 15 )) bench_slice $y '.' dist/bench_llm_n16_s16 --timing-seconds 0.3
grep -E "^llm_" dist/bench_llm_n16_s16/bench.txt | grep -E " 16 " | cut -c1-160
tar -C dist -cJf $OUT/logs_s16a.tar.xz logs16a
echo "done, left $(left)s"
