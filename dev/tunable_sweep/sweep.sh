#!/usr/bin/env bash
# Lab (CPU only, nvcc): every declared tunable value of every seed, one at a time (the others at their defaults),
# compiled as the evaluator compiles a candidate (evaluator/compile/nvcc_compiler.cc's flags) for each arch the
# seed claims; one line a (seed, tunable=value, arch): ok, the registers of the widest kernel, and spill bytes, or
# FAIL with nvcc's first error. The search proposes exactly these variants (the built-in mutator moves one tunable
# at a time), so a value that does not compile, or spills, costs it evaluations; seeds_compile_test checks only
# the defaults (235 variants here, ~30 min on 2 cores: too long for CI).
#   [PAIRS=1] dev/tunable_sweep/sweep.sh OUT_DIR [JOBS] [SEED_GLOB]
# PAIRS=1: every two values of different tunables instead (what crossover and two mutator moves reach).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); out=$(realpath -m "$1"); jobs=${2:-2}; glob=${3:-*}
source "$root/dev/tunable_sweep/set_tunable.sh"
mkdir -p "$out/v"; : > "$out/jobs.txt"
for f in "$root"/kernels/seeds/$glob.cu; do
  seed=$(basename "$f" .cu); [[ $seed == *_test ]] && continue
  archs=$(grep -o "sparseditto:seed.*archs=\[[^]]*\]" "$f" | sed -E 's/.*archs=\[([^]]*)\].*/\1/; s/,/ /g')
  moves=()  # NAME=VALUE, every declared value but the default
  while IFS= read -r line; do
    name=$(sed -E 's/^#define ([A-Z0-9_]+) +([^ ]+) .*/\1/' <<< "$line"); def=$(sed -E 's/^#define ([A-Z0-9_]+) +([^ ]+) .*/\2/' <<< "$line")
    for v in $(sed -E 's/.*values=\[([^]]*)\].*/\1/; s/,/ /g' <<< "$line"); do [[ $v == "$def" ]] || moves+=("$name=$v"); done
  done < <(grep -E "^#define [A-Z0-9_]+ +[^ ]+ +// sparseditto:tunable values=" "$f")
  sets=("${moves[@]}")
  if [[ -n "${PAIRS:-}" ]]; then  # every two values of different tunables
    sets=(); for ((i = 0; i < ${#moves[@]}; ++i)); do for ((j = i + 1; j < ${#moves[@]}; ++j)); do
      [[ ${moves[i]%%=*} != "${moves[j]%%=*}" ]] && sets+=("${moves[i]},${moves[j]}"); done; done
  fi
  for set in "${sets[@]}"; do
    vf="$out/v/${seed}__${set//,/__}.cu"; cp "$f" "$vf"
    for nv in ${set//,/ }; do set_tunable "$vf" "$vf" "$nv" || echo "sweep: could not set $nv in $seed" >&2; done
    for a in $archs; do echo "$vf $a" >> "$out/jobs.txt"; done
  done
done
compile_one() {  # VARIANT ARCH -> one result line
  local vf="$1" a="$2" d=${2#sm_}; local suffix=""; [[ $d == *a ]] && { suffix=a; d=${d%a}; }
  local log="${vf%.cu}.$a.log"
  if nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Xptxas -v -lineinfo \
       -I"$ROOT/kernel_abi" -gencode "arch=compute_$d$suffix,code=sm_$d$suffix" -o /dev/null "$vf" > "$log" 2>&1; then
    local regs spill
    regs=$(grep -oE "Used [0-9]+ registers" "$log" | awk '{print $2}' | sort -n | tail -1)
    spill=$(grep -oE "[0-9]+ bytes spill stores" "$log" | awk '{s+=$1} END{print s+0}')
    printf "%-60s %-7s ok   regs %3s spill %s\n" "$(basename "${vf%.cu}")" "$a" "${regs:-?}" "$spill"
  else
    printf "%-60s %-7s FAIL %s\n" "$(basename "${vf%.cu}")" "$a" "$(grep -m1 -E "error" "$log" | cut -c1-160)"
  fi
}
export -f compile_one; export ROOT="$root" PATH="/usr/local/cuda/bin:$PATH"
echo "sweep: $(wc -l < "$out/jobs.txt") compiles, $jobs at a time" >&2
xargs -P "$jobs" -L 1 bash -c 'compile_one "$0" "$1"' < "$out/jobs.txt" | sort > "$out/results.txt"
grep -c " ok " "$out/results.txt" | sed 's/^/ok: /'; grep -E "FAIL|spill [1-9]" "$out/results.txt" || echo "no failure, no spill"
