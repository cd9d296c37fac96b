#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07, eleventh session; the session before's plan ran in
# its first call): the harness-bias probe with the product judge's exact form (judge_now) and a batch behind a
# whole-GPU gate (batch_wide), u24_stream_sp's plan probe (the plan prepare picks for u70 n = 16 and the time
# under each plan it considered), the corpus entry escape_under_sanitizer.cu (never run on a GPU),
# u24_stream_sp's first wide finalist, then ncu_misses.sh (the ncu script now wraps the candidate host; it profiled
# nothing before) in the time left. Package with the GPU tests (dev/device_calls/README.md).
#   LIMIT=560 bash dev/device_calls/next_call.sh      (carry dist/gpu_*.tar.xz; its $OUT gets the logs)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
nvcc -O2 -std=c++17 -arch=sm_90 -o $L/probe dev/harness_bias/probe.cu -lcublas && timeout 150 $L/probe | tee $L/harness_bias.txt
nvcc -std=c++17 -O3 -arch=sm_90a -I. -Ikernel_abi -o $L/plan_probe dev/u24_plan/plan_probe.cu && timeout 90 $L/plan_probe | tee $L/u24_plan.txt
mkdir -p build/bin && cp -f dist/gpu/bin/* build/bin/ && ln -sfn "$here/dist/gpu/lib" build/lib
SPARSEDITTO_CORPUS_ONLY=escape_under_sanitizer.cu,loaded_nvjet_race.cu timeout 200 build/bin/adversarial_corpus_gpu_test > $L/corpus.log 2>&1
echo "corpus exit $?"; grep -E "^[a-z0-9_]+\.cu |^corpus|PASSED|FAILED" $L/corpus.log | cut -c1-250
timeout 200 "$SD" eval --task configs/suites/seed_finalists_wide.yaml --name wide_unstructured90_fp16 \
  --kernel kernels/seeds/u24_stream_sp.cu --finalist --timing-seconds 0.05 --min-trials 5 --stage-timeout 180 \
  --json $L/fin_u24.json < /dev/null > $L/fin_u24.txt 2>&1  # u24_stream_sp's first wide finalist (sanitizers)
echo "u24 finalist exit $?"; grep -E "verdict:|detail:|compute-sanitizer" $L/fin_u24.txt | cut -c1-300
tar -C dist -cJf $OUT/logs.tar.xz logs
LIMIT=$(left) bash dev/device_calls/ncu_misses.sh
echo "done, left $(left)s"
