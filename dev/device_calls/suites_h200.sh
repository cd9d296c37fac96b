#!/usr/bin/env bash
# Issue 27's must-show: both suites over the whole seed library on an H200, in resumable slices. Run only on an H200
# (the issue's machine; `run` with kind nvidia-h200), the same call again until the last line says every slice is
# done: each call resumes the slices where the last one stopped (a warm machine keeps dist/bench_*; a fresh one
# starts from the dist/bench_*.tar the last call returned, carried with this call). Estimated from the H100 runs of
# 2026-12-07 (`--screen-margin 0.15`): DLMC about 500 s, the LLM suite's fp16 tasks about 350 s, bf16 about the
# same: three 560-second calls, about 1500 s with their starts, most of a session's device time.
#   LIMIT=560 bash dev/device_calls/suites_h200.sh      (carry dist/gpu_*.tar.xz and any dist/bench_h200_*.tar)
set -uo pipefail
source dev/device_calls/setup.sh
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "suites_h200: not an H200; the tables must come from one"; exit 2; }
bench_slice configs/suites/dlmc.yaml '^dlmc_' dist/bench_h200_dlmc --timing-seconds 0.15
bench_slice configs/suites/llm.yaml '_fp16$' dist/bench_h200_llm_fp16 --timing-seconds 0.3
bench_slice configs/suites/llm.yaml '_bf16$' dist/bench_h200_llm_bf16 --timing-seconds 0.3
for d in dlmc llm_fp16 llm_bf16; do
  f=dist/bench_h200_$d/bench.csv
  echo "$d: $( [[ -f $f ]] && tail -n +2 $f | wc -l || echo 0) rows; $(grep -h 'tasks done' dist/bench_h200_$d/stderr.txt 2>/dev/null | tail -1)"
done
echo "done, left $(left)s"
