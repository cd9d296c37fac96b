#!/usr/bin/env bash
# The sixteenth session's second device call (2026-12-08), after the stream seeds' reduction slots came to be sized
# by the split count (5d0bc31) and nm24/u14/u24_stream_sp gained SLAB_FIRST (the slab's first K tiles as their own
# cp.async group, compute starting once they land; default 0): their GPU test, the SASS of the three kernels, the llm
# suite's n = 16 rows re-benched over the library plus each seed with SLAB_FIRST 8 and 16 as seeds of their own
# (resumable: dist/bench_llm_n16_s16), the finalist sanitizers over the stream seeds and their variants, then in the
# time left ncu of u14_stream_sp at u90 8192² (stall reasons and the SASS source page).
#   LIMIT=520 bash dev/device_calls/checks_s16a.sh      (carry dist/gpu_*.tar.xz built at or after fb8acdf)
set -uo pipefail
source dev/device_calls/setup.sh
use_package_bins
L=dist/logs16a; mkdir -p $L $OUT/sass
y=dev/device_calls/llm_n16.yaml
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $L/stream_seeds_gpu_test.log | cut -c1-200
for s in u14_stream_sp nm24_stream_sp u24_stream_sp; do  # SASS as the GPU runs it (this machine has cuobjdump)
  nvcc -std=c++17 -O3 -cubin -Ikernel_abi -gencode arch=compute_90a,code=sm_90a -o dist/$s.cubin kernels/seeds/$s.cu &&
    cuobjdump -sass dist/$s.cubin > $OUT/sass/$s.sass && echo "sass $s: $(wc -l < $OUT/sass/$s.sass) lines"
done
# The library plus SLAB_FIRST 8 and 16 of each stream seed as seeds of their own, on the n = 16 rows.
S=dist/seeds16; rm -rf $S && mkdir -p $S && cp kernels/seeds/*.cu $S/ && rm -f $S/*_test.cu
source dev/tunable_sweep/set_tunable.sh
for s in u14_stream_sp nm24_stream_sp u24_stream_sp; do for v in 8 16; do set_tunable kernels/seeds/$s.cu $S/${s}_slab$v.cu SLAB_FIRST=$v; done; done
LIMIT=$(( ${LIMIT:-560} - 200 )) bench_slice $y '.' dist/bench_llm_n16_s16 --timing-seconds 0.3 --seeds $S
grep -E "^llm_" dist/bench_llm_n16_s16/bench.txt | grep -E " 16 " | cut -c1-160
cp dist/bench_llm_n16_s16/bench.csv $L/bench_llm_n16.csv 2>/dev/null
if (( $(left) > 120 )); then  # the stream seeds as now defaulted and with every path on, through the finalist sanitizers
  dev/tunable_sweep/path_variants.sh dist/finalist_seeds
  SEEDS_DIR=dist/finalist_seeds timeout $(( $(left) - 40 < 200 ? $(left) - 40 : 200 )) scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
  cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200; cp dist/finalists/summary.txt $L/finalists.txt 2>/dev/null
fi
# ncu at the large shape (u90 8192², where u14 misses 2.0x by the most): stall reasons and the SASS with its stall
# samples (the source page), to see which instructions the warps wait at.
prof() {  # seed kernel_regex task tag
  local N=dist/ncu16a/$4
  timeout 150 scripts/ncu_profile.sh "$SD" $y $3 kernels/seeds/$1.cu $2 $N > $L/ncu_$4.log 2>&1; echo "ncu $4 exit $?"
  python3 dev/device_calls/stalls.py "$N/raw.csv" | tee $L/stalls_$4.txt
  cp "$N/details.txt" $L/ncu_$4_details.txt 2>/dev/null
  ncu --import "$N/full.ncu-rep" --page source --csv --print-source sass > $L/source_$4.csv 2>&1; echo "source page: $(wc -l < $L/source_$4.csv) lines"
}
(( $(left) > 100 )) && prof u14_stream_sp U14StreamKernel llm_unstructured90_8192x8192_fp16 u14_8192
tar -C dist -cJf $OUT/logs_s16a.tar.xz logs16a
echo "done, left $(left)s"
