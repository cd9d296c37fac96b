#!/usr/bin/env bash
# The next session's second device call (planned 2026-12-07, thirteenth session), after checks_s13a.sh and the
# defaults it decided (edit the seeds' #defines first; the bench reads them from this checkout): the split probe
# (dev/stream_plan: nm24 and u14 under every forced split count), the generality suite's unstructured tasks and
# the llm suite's n = 16 stream rows re-benched, then in the time left the three stream seeds (as defaulted now)
# and their variants with every path off by default on (dev/tunable_sweep/path_variants.sh) through the finalist
# sanitizers on dev/tunable_sweep/paths.yaml (shapes where those paths run), the corpus's sanitizer escapes and the harness
# batch-size check, and the stream family's spilling tunable values against their defaults (dev/tunable_sweep).
#   LIMIT=560 bash dev/device_calls/checks_s13b.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
use_package_bins
# the stream seeds' GPU test, with ed07a11's u24 THIRDS 0 case (never run on a GPU before this call)
timeout 150 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure|Expected" $L/stream_seeds_gpu_test.log | cut -c1-200
for seed in nm24 u14; do  # split counts forced (dev/stream_plan)
  nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=$seed -o dist/split_$seed dev/stream_plan/split_probe.cu && timeout 60 dist/split_$seed | tee $L/split_$seed.txt
done
LIMIT=$(( ${LIMIT:-560} - 200 )) bench_slice configs/suites/generality.yaml '^gen_unstructured' dist/bench_gen_u_s13 --timing-seconds 0.3
grep -E "^gen_unstructured" dist/bench_gen_u_s13/bench.txt | cut -c1-140
LIMIT=$(( ${LIMIT:-560} - 60 )) bench_slice dev/device_calls/llm_n16.yaml '.' dist/bench_llm_n16_s13 --timing-seconds 0.3
grep -E "^llm_" dist/bench_llm_n16_s13/bench.txt | grep -E " 16 " | cut -c1-140
if (( $(left) > 220 )); then  # the stream seeds as now defaulted and with every path on, through the finalist sanitizers
  dev/tunable_sweep/path_variants.sh dist/finalist_seeds
  SEEDS_DIR=dist/finalist_seeds timeout 200 scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
  cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200
fi
(( $(left) > 150 )) && { SPARSEDITTO_CORPUS_ONLY=outlive_under_sanitizer.cu,escape_under_sanitizer.cu timeout 140 build/bin/adversarial_corpus_gpu_test > $L/corpus.log 2>&1
  echo "corpus exit $?"; grep -E "^[a-z0-9_]+\.cu |^corpus|PASSED|FAILED" $L/corpus.log | cut -c1-250; }
(( $(left) > 100 )) && dev/harness_bias/batch_size.sh "$SD" dist/batch_size | tee $L/batch_size.txt
(( $(left) > 60 )) && dev/tunable_sweep/spill_ab.sh "$SD" dist/spill_ab $(( $(left) - 15 )) | tee $L/spill_ab.txt
tar -C dist -cJf $OUT/logs_s13b.tar.xz logs
echo "done, left $(left)s"
