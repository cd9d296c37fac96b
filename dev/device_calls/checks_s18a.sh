#!/usr/bin/env bash
# Planned for the next session's first device call on a GPU other than an H200 (written 2026-12-08, seventeenth
# session, which got no GPU; not yet run). Since the last GPU run the four stream seeds form each ldmatrix address
# as tile 0's offset plus the tile (static SASS of the main loop a K tile, dev/ptx_census/sass.py: nm24 36.2 -> 25.5,
# u14 123.6 -> 111.8, u24 145.2 -> 135.9, dense_stream 47.0 -> 40.2; host tests prove the addresses the same), and
# u14_stream_sp's PRMT_EXPAND 1 is the first-high layout (76.5 a tile), u24's thirds read their metadata words
# whole (135.9 -> 88.4), and bsr_mma loads its stages from a per-thread plan (block 32's loop about 400 -> 120 a
# block of 16 HMMA, the n % 8 == 0 path), as does nm24_mma_sp (the Ampere 2:4 seed: its small-n tile 588 -> 107 a
# K tile of 4 mma.sp). This call: the stream seeds' GPU test
# (defaults and PRMT_EXPAND), the llm suite's n = 16 rows benched over the library plus the four seeds as they were
# (dist/seeds_before/*_before.cu, made by `bash dev/device_calls/seeds_before.sh c4760af` and carried) and u14 with
# PRMT_EXPAND 1 as seeds of their own, bsr_mma and nm24_mma_sp through awkward shapes (awkward_shapes.yaml:
# verified before timed),
# the llm suite's block 32 at 90% tasks with bsr_mma against bsr_mma_before,
# u14's A/B on the generality suite's u90 tasks, the finalist sanitizers over
# the stream seeds and their every-path variants, and ncu of u14 with PRMT_EXPAND 1 at u90 8192² in the time left.
#   LIMIT=520 bash dev/device_calls/checks_s18a.sh   (carry dist/gpu_*.tar.xz, built at or after the bsr_mma stage
#   plan commit, and dist/seeds_before); call it twice: the second call finishes the benches and runs the rest.
set -uo pipefail
source dev/device_calls/setup.sh
use_package_bins
L=dist/logs18a; mkdir -p $L
y=dev/device_calls/llm_n16.yaml
# A second call on the warm machine skips the GPU test it has run and resumes the benches where they stopped.
[[ -s $L/stream_seeds_gpu_test.log ]] || { timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"; }
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $L/stream_seeds_gpu_test.log | cut -c1-200
# bsr_mma's and nm24_mma_sp's stage plans at awkward shapes (n not a multiple of 8, both dtypes): verified, then timed.
[[ -s $L/awkward.txt ]] || for st in bsr_mma:awkward_block16_fp16 bsr_mma:awkward_block32_bf16 bsr_mma:awkward_block64_fp16 \
                                     nm24_mma_sp:awkward_nm24_fp16 nm24_mma_sp:awkward_nm24_bf16; do
  timeout 60 "$SD" eval --task dev/device_calls/awkward_shapes.yaml --name ${st#*:} --kernel kernels/seeds/${st%%:*}.cu \
    --task-shapes-only --timing-seconds 0.1 --cache dist/eval18 >> $L/awkward.txt 2>&1; echo "${st%%:*} ${st#*:} exit $?"
done
grep -E "verdict|REJECTED|FAILED|mismatch" $L/awkward.txt | cut -c1-160 | head -20
S=dist/seeds18; rm -rf $S && mkdir -p $S && cp kernels/seeds/*.cu $S/ && rm -f $S/*_test.cu
ls dist/seeds_before/*_before.cu > /dev/null && cp dist/seeds_before/*_before.cu $S/ || echo "no dist/seeds_before carried: no before rows"
source dev/tunable_sweep/set_tunable.sh
set_tunable kernels/seeds/u14_stream_sp.cu $S/u14_stream_sp_first_high.cu PRMT_EXPAND=1
LIMIT=$(( ${LIMIT:-560} - 190 )) bench_slice $y '.' dist/bench_llm_n16_s18 --timing-seconds 0.3 --seeds $S
grep -E "^llm_" dist/bench_llm_n16_s18/bench.txt | grep -E " 16 " | cut -c1-160
cp dist/bench_llm_n16_s18/bench.csv $L/bench_llm_n16.csv 2>/dev/null
python3 dev/device_calls/variants_from_bench.py dist/bench_llm_n16_s18/bench.csv 2>/dev/null | tee $L/variants_n16.txt
if (( $(left) > 200 )); then  # every n of the block 32 at 90% tasks: bsr_mma as now and as it was, beside the library
  LIMIT=$(( ${LIMIT:-560} - 150 )) bench_slice configs/suites/llm.yaml 'block32_90_.*fp16' dist/bench_block32_s18 --timing-seconds 0.3 --seeds $S
  grep -E "^llm_" dist/bench_block32_s18/bench.txt | cut -c1-160
  cp dist/bench_block32_s18/bench.csv $L/bench_block32.csv 2>/dev/null
  python3 dev/device_calls/variants_from_bench.py dist/bench_block32_s18/bench.csv 2>/dev/null | tee $L/variants_block32.txt
fi
for t in $(grep -oE "name: gen_unstructured90[a-z0-9_]*" dev/device_calls/gen_u90_n16.yaml | cut -d' ' -f2); do
  (( $(left) > 190 )) && ab_in dist/ab18 $L/ab.txt u14_stream_sp dev/device_calls/gen_u90_n16.yaml $t PRMT_EXPAND=1
done
if (( $(left) > 150 )); then
  dev/tunable_sweep/path_variants.sh dist/finalist_seeds
  SEEDS_DIR=dist/finalist_seeds timeout $(( $(left) - 60 < 200 ? $(left) - 60 : 200 )) scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
  cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200; cp dist/finalists/summary.txt $L/finalists.txt 2>/dev/null
fi
if (( $(left) > 60 )); then
  N=dist/ncu18a; set_tunable kernels/seeds/u14_stream_sp.cu dist/u14_first_high.cu PRMT_EXPAND=1
  timeout $(( $(left) - 20 )) scripts/ncu_profile.sh "$SD" $y llm_unstructured90_8192x8192_fp16 dist/u14_first_high.cu U14StreamKernel $N > $L/ncu.log 2>&1
  echo "ncu exit $?"; python3 dev/device_calls/stalls.py $N/raw.csv | tee $L/stalls_u14_first_high_8192.txt
  grep -E "Duration|Executed Instructions  |Issue Slots|DRAM Throughput" $N/details.txt | tee -a $L/stalls_u14_first_high_8192.txt
fi
tar -C dist -cJf $OUT/logs_s18a.tar.xz logs18a
echo "done, left $(left)s"
