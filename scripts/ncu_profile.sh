#!/usr/bin/env bash
# Profiles one candidate kernel with Nsight Compute as `sparseditto eval` runs it. Candidates run in the
# candidate host (sparseditto-candidate-host, started by the runner from beside itself), so the script makes a
# profiling install in OUT_DIR/bin: a copy of the runner, and beside it a wrapper "host" that runs the real host
# under ncu; the evaluator is pointed at that runner (SPARSEDITTO_RUNNER).
#   scripts/ncu_profile.sh SPARSEDITTO TASK_FILE TASK_NAME KERNEL_FILE KERNEL_REGEX OUT_DIR
# SPARSEDITTO: the sparseditto binary (sparseditto-runner and sparseditto-candidate-host sit beside it);
# KERNEL_REGEX: the candidate's __global__ function (ncu -k regex:...).
# Two passes: a light one (duration and grid size of the first 40 matching launches) picks the launch with
# the largest grid and, among those, the longest (the task's largest n), then a full one profiles that launch
# alone (SpeedOfLight, Occupancy, LaunchStats, ComputeWorkloadAnalysis,
# InstructionStats, MemoryWorkloadAnalysis, WarpStateStats, SourceCounters).
# Both passes run eval with --task-shapes-only, so every launch is of the task's own shapes: with the smoke
# shapes, a kernel that sizes its grid to the device can give a smoke shape a larger grid than the task's
# (session 12 profiled a smoke launch that way). The verdicts eval prints under ncu mean nothing: the
# profiler's replays show as work off the stream, and the timing stops at the first n.
# For the project's own kernels only: the host runs without its sandbox (SPARSEDITTO_HOST_SANDBOX=off; ncu's
# injection cannot work inside it, and the host is given only a whitelisted environment, which leaves ncu out
# unless ncu starts the host itself) and the runner copy's wrapper beside it is accepted
# (SPARSEDITTO_ALLOW_MISSING_LAYERS=1). Never profile generated code this way.
# Writes OUT_DIR/light.csv, details.txt (ncu --page details), raw.csv (every metric) and the two eval logs.
# Clock control is off (the GPU runs at the clocks the timing saw); ncu flushes caches before the profiled
# launch itself. Exit status: 0, or 1 with a message saying which step failed.
set -uo pipefail
[[ $# -eq 6 ]] || { sed -n '2,22p' "$0" >&2; exit 2; }
sd=$(realpath "$1"); task_file="$2"; task="$3"; kernel="$4"; regex="$5"; out="$6"
runner="$(dirname "$sd")/sparseditto-runner"
host="$(dirname "$sd")/sparseditto-candidate-host"
ncu=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
[[ -x "$ncu" ]] || { echo "ncu_profile: ncu not found (PATH or /usr/local/cuda/bin)" >&2; exit 1; }
[[ -x "$runner" ]] || { echo "ncu_profile: no runner beside $sd ($runner)" >&2; exit 1; }
[[ -x "$host" ]] || { echo "ncu_profile: no candidate host beside $sd ($host)" >&2; exit 1; }
mkdir -p "$out/bin"; out=$(realpath "$out"); rm -f "$out"/light*.csv
cp -f "$runner" "$out/bin/sparseditto-runner" || { echo "ncu_profile: cannot copy the runner into $out/bin" >&2; exit 1; }
# A packaged runner finds its libraries through RUNPATH $ORIGIN/../lib (scripts/package_gpu.sh): the copy too.
[[ -d "$(dirname "$runner")/../lib" ]] && ln -sfn "$(realpath "$(dirname "$runner")/../lib")" "$out/lib"

# Runs eval once with every candidate host under `ncu ARGS...`; @PID@ in ARGS becomes the host wrapper's
# process ID, so each host (the judge's calibration host, the candidate's) writes its own files. The wrapper
# runs ncu in its own session so the runner's kill of a finished host does not reach the profiler mid-write.
profile_pass() {
  local log="$1"; shift
  { printf '#!/bin/bash\nexport HOME="${HOME:-/tmp}"\nargs=('; printf ' %q' "$@"
    printf ')\nsetsid %q "${args[@]//@PID@/$$}" %q "$@" &\nwait $!\n' "$ncu" "$host"; } > "$out/bin/sparseditto-candidate-host"
  chmod +x "$out/bin/sparseditto-candidate-host"
  SPARSEDITTO_RUNNER="$out/bin/sparseditto-runner" SPARSEDITTO_HOST_SANDBOX=off SPARSEDITTO_ALLOW_MISSING_LAYERS=1 \
    timeout 300 "$sd" eval --task "$task_file" --name "$task" --kernel "$kernel" \
    --task-shapes-only --timing-seconds 0.02 --min-trials 2 --stage-timeout 240 > "$log" 2>&1
}

profile_pass "$out/eval_light.txt" --clock-control none -k "regex:$regex" --launch-count 40 \
  --metrics gpu__time_duration.sum,launch__grid_size --csv --log-file "$out/light.@PID@.csv"
# The candidate's host wrote the largest log (the calibration host launches no candidate kernel).
light=$(ls -S "$out"/light.*.csv 2>/dev/null | head -1)
[[ -n "$light" && -s "$light" ]] || { echo "ncu_profile: light pass wrote nothing (see $out/eval_light.txt)" >&2; exit 1; }
mv -f "$light" "$out/light.csv" && rm -f "$out"/light.*.csv
# The launch to profile: among the distinct launch IDs in the order ncu met them, the one with the largest grid
# (blocks) and, among those, the longest (a kernel that sizes its grid to the device launches the same grid at
# every n; the longest is the largest n); on a full tie the first. ncu's CSV quotes every field and no field
# holds '","', so that splits the columns; a launch has one row a metric.
pick_launch() {
  local line id grid_col=-1 id_col=-1 name_col=-1 value_col=-1 index=-1 pick=-1 last="" i dims d
  local size=0 ns=0 best_size=-1 best_ns=-1
  local -a f
  consider() {  # the launch just read (index, size, ns) against the best so far
    ((index < 0)) && return
    if ((size > best_size || (size == best_size && ns > best_ns))); then best_size=$size best_ns=$ns pick=$index; fi
  }
  while IFS= read -r line; do
    line=${line%$'\r'}; [[ $line == \"* ]] || continue
    line=${line#\"}; line=${line%\"}
    IFS=$'\x1f' read -r -a f <<< "${line//\",\"/$'\x1f'}"
    if ((grid_col < 0)); then
      for i in "${!f[@]}"; do
        case ${f[$i]} in "Grid Size") grid_col=$i;; "ID") id_col=$i;; "Metric Name") name_col=$i;; "Metric Value") value_col=$i;; esac
      done
      ((grid_col >= 0 && id_col >= 0)) || return 1
      continue
    fi
    id=${f[$id_col]}
    if [[ $id != "$last" ]]; then
      consider
      last=$id; index=$((index + 1)); ns=0
      dims=${f[$grid_col]//[() ]/}; size=1
      IFS=, read -r -a d <<< "$dims"
      for i in "${d[@]}"; do size=$((size * i)); done
    fi
    if ((name_col >= 0 && value_col >= 0)) && [[ ${f[$name_col]:-} == gpu__time_duration.sum ]]; then
      ns=${f[$value_col]:-}; ns=${ns//,/}; ns=${ns%%.*}; ns=${ns//[^0-9]/}; ns=${ns:-0}
    fi
  done < "$1"
  consider
  ((pick >= 0)) && echo "$pick"
}
skip=$(pick_launch "$out/light.csv") || { echo "ncu_profile: no launch of regex '$regex' in $out/light.csv" >&2; exit 1; }

rm -f "$out"/full*.ncu-rep
profile_pass "$out/eval_full.txt" --clock-control none -k "regex:$regex" --launch-skip "$skip" --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
  --section InstructionStats --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
  -o "$out/full.@PID@"
report=$(ls -S "$out"/full.*.ncu-rep 2>/dev/null | head -1)
[[ -n "$report" ]] && mv -f "$report" "$out/full.ncu-rep"
[[ -s "$out/full.ncu-rep" ]] || { echo "ncu_profile: full pass wrote no report (see $out/eval_full.txt)" >&2; exit 1; }
"$ncu" --import "$out/full.ncu-rep" --page details > "$out/details.txt" 2>&1 || { echo "ncu_profile: import failed" >&2; exit 1; }
"$ncu" --import "$out/full.ncu-rep" --page raw --csv > "$out/raw.csv" 2>&1
echo "ncu_profile: launch $skip of '$regex' (largest grid) profiled: $out/details.txt"
