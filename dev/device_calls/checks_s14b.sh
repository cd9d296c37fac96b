#!/usr/bin/env bash
# The fourteenth session's second device call, on the machine checks_s13a.sh left warm, after the seeds' defaults
# were edited to what its A/Bs picked (the bench reads the seeds from this checkout). Shorter than checks_s13b.sh
# (this session's device time went mostly to refused starts): the three stream seeds as now defaulted, and each with
# every path that is off by default on (dev/tunable_sweep/path_variants.sh), through the finalist sanitizers on
# shapes where those paths run (dev/tunable_sweep/paths.yaml) first (issue 27: every seed passes the cascade with the sanitizers),
# then the llm suite's n = 16 stream rows re-benched in the time left.
#   LIMIT=300 bash dev/device_calls/checks_s14b.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs; mkdir -p $L
dev/tunable_sweep/path_variants.sh dist/finalist_seeds
SEEDS_DIR=dist/finalist_seeds timeout $(( $(left) * 5 / 10 )) scripts/seed_finalists.sh "$SD" dev/tunable_sweep/paths.yaml dist/finalists 3 2
cat dist/finalists/summary.txt 2>/dev/null | cut -c1-200
cp dist/finalists/summary.txt $L/finalists_summary.txt 2>/dev/null
bench_slice dev/device_calls/llm_n16.yaml '.' dist/bench_llm_n16_s14 --timing-seconds 0.3
grep -E "^llm_" dist/bench_llm_n16_s14/bench.txt | cut -c1-160
tar -C dist -cJf $OUT/logs_s14b.tar.xz logs finalists
echo "done, left $(left)s"
