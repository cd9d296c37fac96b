#!/usr/bin/env bash
# Profiles one candidate kernel with Nsight Compute as `sparseditto eval` runs it: the evaluator starts its
# runner through a wrapper (SPARSEDITTO_RUNNER) that runs the real runner under ncu.
#   scripts/ncu_profile.sh SPARSEDITTO TASK_FILE TASK_NAME KERNEL_FILE KERNEL_REGEX OUT_DIR
# SPARSEDITTO: the sparseditto binary (its runner, sparseditto-runner, sits beside it); KERNEL_REGEX: the
# candidate's __global__ function (ncu -k regex:...; the runner also launches baselines and the reference).
# Two passes: a light one (duration and grid size of the first 40 matching launches) picks the launch with
# the largest grid (the task's largest n; its first occurrence, a warm-up or the correctness run), then a full
# one profiles that launch alone (SpeedOfLight, Occupancy, LaunchStats, ComputeWorkloadAnalysis,
# InstructionStats, MemoryWorkloadAnalysis, WarpStateStats, SourceCounters).
# Writes OUT_DIR/light.csv, details.txt (ncu --page details), raw.csv (every metric) and the two eval logs.
# Clock control is off (the GPU runs at the clocks the timing saw); ncu flushes caches before the profiled
# launch itself. Exit status: 0, or 1 with a message saying which step failed.
set -uo pipefail
[[ $# -eq 6 ]] || { sed -n '2,13p' "$0" >&2; exit 2; }
sd=$(realpath "$1"); task_file="$2"; task="$3"; kernel="$4"; regex="$5"; out="$6"
runner="$(dirname "$sd")/sparseditto-runner"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[[ -x "$ncu" ]] || { echo "ncu_profile: ncu not found (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
[[ -x "$runner" ]] || { echo "ncu_profile: no runner beside $sd ($runner)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "ncu_profile: python3 missing (picks the launch)" >&2; exit 1; }
mkdir -p "$out"; out=$(realpath "$out")
wrapper="$out/runner_under_ncu.sh"

# Runs eval once with the runner under `ncu ARGS...`; the wrapper runs ncu in its own session so the
# evaluator's signals to the runner's process group do not reach the profiler mid-write.
profile_pass() {
  local log="$1"; shift
  { printf '#!/bin/bash\nsetsid %q' "$ncu"; printf ' %q' "$@"; printf ' %q "$@" &\nwait $!\n' "$runner"; } > "$wrapper"
  chmod +x "$wrapper"
  SPARSEDITTO_RUNNER="$wrapper" timeout 300 "$sd" eval --task "$task_file" --name "$task" --kernel "$kernel" \
    --timing-seconds 0.02 --min-trials 2 --stage-timeout 240 > "$log" 2>&1
}

profile_pass "$out/eval_light.txt" --clock-control none -k "regex:$regex" --launch-count 40 \
  --metrics gpu__time_duration.sum,launch__grid_size --csv --log-file "$out/light.csv"
[[ -s "$out/light.csv" ]] || { echo "ncu_profile: light pass wrote nothing (see $out/eval_light.txt)" >&2; exit 1; }
skip=$(python3 - "$out/light.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if len(rows) < 2:
    sys.exit("no launch matched")
head = rows[0]
grid, ident = head.index("Grid Size"), head.index("ID")
seen, best, pick = [], -1, 0
for r in rows[1:]:
    if r[ident] in seen:
        continue
    seen.append(r[ident])
    size = 1
    for x in r[grid].strip("()").split(","):
        size *= int(x)
    if size > best:
        best, pick = size, len(seen) - 1
print(pick)
PY
) || { echo "ncu_profile: no launch of regex '$regex' in $out/light.csv" >&2; exit 1; }

rm -f "$out/full.ncu-rep"
profile_pass "$out/eval_full.txt" --clock-control none -k "regex:$regex" --launch-skip "$skip" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
  --section InstructionStats --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
  -o "$out/full"
[[ -s "$out/full.ncu-rep" ]] || { echo "ncu_profile: full pass wrote no report (see $out/eval_full.txt)" >&2; exit 1; }
"$ncu" --import "$out/full.ncu-rep" --page details > "$out/details.txt" 2>&1 || { echo "ncu_profile: import failed" >&2; exit 1; }
"$ncu" --import "$out/full.ncu-rep" --page raw --csv > "$out/raw.csv" 2>&1
echo "ncu_profile: launch $skip of '$regex' (largest grid) profiled: $out/details.txt"
