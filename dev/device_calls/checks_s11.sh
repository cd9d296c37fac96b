#!/usr/bin/env bash
# GPU checks of the session of 2026-12-07 (eleventh), one call: the finalist sanitizers inside the host's sandbox
# (a correct seed's finalist must still pass all three tools; the corpus's sanitizer entries must still be
# caught, loaded_nvjet_race.cu at FINALIST), evaluator_gpu_test after the judge's flush move, and the harness
# bias after it: dense_cublas and dense_cublaslt (which make cublas_dense's own call) against cublas_dense on
# DLMC fp16 and LLM n = 16/128 rows; then ncu_misses.sh in the time left. Package with the GPU tests (dev/device_calls/README.md).
#   LIMIT=560 bash dev/device_calls/checks_s11.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs2; mkdir -p $L
use_package_bins
"$SD" bench --suite configs/suites/seed_finalists_wide.yaml --list > $L/wide_list.tsv 2>&1
read -r task _ file < <(awk -F'\t' '$2 == "dense_stream"' $L/wide_list.tsv | head -1)
timeout 170 "$SD" eval --task configs/suites/seed_finalists_wide.yaml --name "$task" --kernel "$file" --finalist \
  --timing-seconds 0.05 --min-trials 5 --stage-timeout 150 --json $L/fin_dense_stream.json < /dev/null > $L/fin_dense_stream.txt 2>&1
echo "finalist dense_stream exit $? (left $(left)s)"; grep -E "verdict:|detail:|compute-sanitizer" $L/fin_dense_stream.txt | cut -c1-300
SPARSEDITTO_CORPUS_ONLY=loaded_nvjet_race.cu,forge_sanitizer_lines.cu,uninitialised_read.cu \
  timeout 200 build/bin/adversarial_corpus_gpu_test > $L/corpus.log 2>&1
echo "corpus exit $? (left $(left)s)"; grep -E "^[a-z0-9_]+\.cu |^corpus|^reference|PASSED|FAILED" $L/corpus.log | cut -c1-250
timeout 150 build/bin/evaluator_gpu_test > $L/evaluator_gpu.log 2>&1
echo "evaluator_gpu_test exit $? (left $(left)s)"; grep -E "^\[  (PASSED|FAILED)|Failure" $L/evaluator_gpu.log | head -5
tar -C dist -cJf $OUT/logs2.tar.xz logs2
mkdir -p dist/seeds_bias && cp kernels/seeds/dense_cublas.cu kernels/seeds/dense_cublaslt.cu dist/seeds_bias/
bench_slice configs/suites/dlmc.yaml '^dlmc_encoder_sa_q_.*_fp16$' dist/bench_bias_dlmc \
  --seeds dist/seeds_bias --timing-seconds 0.3
bench_slice configs/suites/llm.yaml '^llm_(nm24|unstructured90)_4096x4096_fp16$' dist/bench_bias_llm \
  --seeds dist/seeds_bias --timing-seconds 0.3
echo "bias benches done, left $(left)s"
LIMIT=$(left) bash dev/device_calls/ncu_misses.sh  # issue 27's ncu evidence in what time is left
