#!/usr/bin/env bash
# Resumable bench slices in one device call: SUITES="suite@name_regex@dir@timing_seconds ..." in order, each
# given what time is left before LIMIT (seconds, default 560). Run from the repository root:
#   LIMIT=560 SUITES="configs/suites/llm.yaml@^llm_.*_bf16\$@dist/bench_llm_bf16@0.3" bash dev/device_calls/bench_slices.sh
set -uo pipefail
source dev/device_calls/setup.sh
for spec in ${SUITES}; do
  IFS='@' read -r suite name dir secs <<< "$spec"
  bench_slice "$suite" "$name" "$dir" --timing-seconds "${secs:-0.3}"
done
echo "done, left $(left)s"
