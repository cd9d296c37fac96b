#!/usr/bin/env bash
# Planned for the next session's first device call (written 2026-12-08, sixteenth session; not yet run):
# u14_stream_sp's PRMT_EXPAND (the (0, 3) pairs stored position 3 first, so a register is one byte permute: 110 PTX
# instructions a K tile against 150; the expansion was 83 of 160 SASS instructions a warp-tile on an H100 at u90 8192²)
# through its GPU test cases, against its default on the llm suite's four u90 shapes and the generality suite's
# unstructured 90% tasks, then the finalist sanitizers over the stream seeds and their every-path variants (u14's
# includes PRMT_EXPAND), and ncu of the variant at u90 8192² if time is left.
#   LIMIT=520 bash dev/device_calls/checks_s17a.sh      (carry dist/gpu_*.tar.xz built at or after the PRMT_EXPAND commit)
set -uo pipefail
source dev/device_calls/setup.sh
use_package_bins
L=dist/logs17a; mkdir -p $L
ab() { ab_in dist/ab17 $L/ab.txt "$@"; }
y=dev/device_calls/llm_n16.yaml
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds_gpu_test.log 2>&1; echo "stream_seeds_gpu_test exit $?"
grep -E "^\[ *(OK|FAILED|PASSED) *\]|Failure" $L/stream_seeds_gpu_test.log | cut -c1-200
for t in 4096x4096 4096x11008 11008x4096 8192x8192; do ab u14_stream_sp $y llm_unstructured90_${t}_fp16 PRMT_EXPAND=1; done
for t in $(grep -oE "name: gen_unstructured90[a-z0-9_]*" dev/device_calls/gen_u90_n16.yaml | cut -d' ' -f2); do
  ab u14_stream_sp dev/device_calls/gen_u90_n16.yaml $t PRMT_EXPAND=1
done
if (( $(left) > 200 )); then
  dev/tunable_sweep/path_variants.sh dist/finalist_seeds
  SEEDS_DIR=dist/finalist_seeds timeout $(( $(left) - 60 < 200 ? $(left) - 60 : 200 )) scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
  cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200; cp dist/finalists/summary.txt $L/finalists.txt 2>/dev/null
fi
if (( $(left) > 60 )); then
  N=dist/ncu17a; source dev/tunable_sweep/set_tunable.sh; set_tunable kernels/seeds/u14_stream_sp.cu dist/u14_prmt.cu PRMT_EXPAND=1
  timeout $(( $(left) - 20 )) scripts/ncu_profile.sh "$SD" $y llm_unstructured90_8192x8192_fp16 dist/u14_prmt.cu U14StreamKernel $N > $L/ncu.log 2>&1
  echo "ncu exit $?"; python3 dev/device_calls/stalls.py $N/raw.csv | tee $L/stalls_u14_prmt_8192.txt
  grep -E "Duration|Executed Instructions  |Issue Slots|DRAM Throughput" $N/details.txt | tee -a $L/stalls_u14_prmt_8192.txt
fi
tar -C dist -cJf $OUT/logs_s17a.tar.xz logs17a
echo "done, left $(left)s"
