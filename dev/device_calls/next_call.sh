#!/usr/bin/env bash
# The next session's first device call (planned 2026-12-07): the harness-bias probe, the new corpus entry
# (forge_sanitizer_lines.cu) with the judge's reference runs around it, dense_cublas's finalist with its
# artifacts (initcheck's own report; its workspace is now zeroed in prepare), then the LLM rows the suites of
# 2026-12-07 did not reach, after the unstructured 50/70% rows again with the new u24_stream_sp. Package with the GPU tests (dev/device_calls/README.md).
#   LIMIT=560 bash dev/device_calls/next_call.sh      (carry dist/gpu_*.tar.xz; its $OUT gets the logs and tables)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
nvcc -O2 -std=c++17 -arch=sm_90 -o $L/probe dev/harness_bias/probe.cu -lcublas && timeout 120 $L/probe | tee $L/harness_bias.txt
mkdir -p build/bin && cp -f dist/gpu/bin/* build/bin/ && ln -sfn "$here/dist/gpu/lib" build/lib
SPARSEDITTO_CORPUS_ONLY=forge_sanitizer_lines.cu,forge_slowest_batches.cu,forge_alternate_batches.cu timeout 300 build/bin/adversarial_corpus_gpu_test > $L/corpus.log 2>&1
echo "corpus exit $?"; grep -E "^forge|^corpus|^reference|PASSED|FAILED" $L/corpus.log | head
timeout 200 build/bin/stream_seeds_gpu_test > $L/stream_seeds.log 2>&1; echo "stream_seeds_gpu_test exit $?"  # u24_stream_sp's first GPU run
grep -E "^\[  (PASSED|FAILED)|Failure" $L/stream_seeds.log | head -5
"$SD" bench --suite configs/suites/seed_finalists_wide.yaml --list > $L/wide_list.tsv 2>&1
read -r task _ file < <(awk -F'\t' '$2 == "dense_cublas"' $L/wide_list.tsv | head -1)
timeout 150 "$SD" eval --task configs/suites/seed_finalists_wide.yaml --name "$task" --kernel "$file" --finalist \
  --timing-seconds 0.05 --min-trials 5 --stage-timeout 120 --out $L/fin_dense_cublas --json $L/fin_dense_cublas.json \
  < /dev/null > $L/fin_dense_cublas.txt 2>&1
grep -E "verdict:|compute-sanitizer" $L/fin_dense_cublas.txt | cut -c1-300
tar -C dist -cJf $OUT/logs.tar.xz logs
bench_slice configs/suites/llm.yaml '^llm_unstructured(50|70)_.*_fp16$' dist/bench_llm_u24 --timing-seconds 0.3  # the rows u24_stream_sp is for
bench_slice configs/suites/llm.yaml '^llm_(block64_80|block32_80)_.*_fp16$|_bf16$' dist/bench_llm_rest --timing-seconds 0.3
echo "done, left $(left)s"
