#!/bin/bash
# Lab sweep (run from the repository root on a GPU node): tunable variants of nm24_stream_sp and u14_stream_sp
# at n = 16 on the four LLM shapes (n16.yaml beside this script), each task one
# `sparseditto eval` of all its variants (verified on the task's shapes, timed 0.3 s against the baselines).
# Prints per task and variant: verdict, kernel ms, spread, baselines (ms, speedup). Stops at LIMIT_S seconds.
#   dev/stream_n16/sweep16.sh SPARSEDITTO OUT_DIR [LIMIT_S]     (EXTRA_NM24 / EXTRA_U14: more "name TUNABLE value..." variants)
here=$(cd "$(dirname "$0")" && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=${3:-240}; start=$(date +%s)
mkdir -p "$out/v"
mk() {  # seed name changes...
  local seed=$1 name=$2; shift 2; local f="$out/v/${seed}_$name.cu"
  local src=kernels/seeds/$seed.cu; [ -f "$seed" ] && { src=$seed; f="$out/v/$(basename ${seed%.cu})_$name.cu"; }
  cp "$src" "$f"
  while [ $# -gt 1 ]; do sed -i -E "s/^#define $1 [0-9]+ /#define $1 $2 /" "$f"; shift 2; done
  echo "$f"
}
declare -A K
K[nm24]="$(for v in "def" "c2 CTAS_PER_SM 2" "c3 CTAS_PER_SM 3" "u6 UNROLL 6" "u2c3 UNROLL 2 CTAS_PER_SM 3" "w4c2 WARPS 4 CTAS_PER_SM 2" "w4c3 WARPS 4 CTAS_PER_SM 3" "u6c2 UNROLL 6 CTAS_PER_SM 2" ${EXTRA_NM24}; do echo "--kernel $(mk nm24_stream_sp $v)"; done)"
K[u90]="$(for v in "def" "c1 CTAS_PER_SM 1" "c3 CTAS_PER_SM 3" "u6 UNROLL 6" "u2c3 UNROLL 2 CTAS_PER_SM 3" "w4c2 WARPS 4" "w4c3 WARPS 4 CTAS_PER_SM 3" "u6c3 UNROLL 6 CTAS_PER_SM 3" ${EXTRA_U14}; do echo "--kernel $(mk u14_stream_sp $v)"; done)"
for t in nm24_4096x4096 u90_4096x4096 nm24_8192x8192 u90_8192x8192 nm24_4096x11008 u90_4096x11008 nm24_11008x4096 u90_11008x4096; do
  left=$(( limit - ($(date +%s) - start) )); [ $left -lt 20 ] && { echo "sweep: out of time before $t"; break; }
  timeout $left "$sd" eval --task "$here/n16.yaml" --name $t ${K[${t%%_*}]} --task-shapes-only --timing-seconds 0.3 --cache "$out/cache" > "$out/$t.txt" 2>&1
  echo "== $t (exit $?, $(( $(date +%s) - start )) s)"
  awk '/^candidate /{c=$2; sub(/-[0-9a-f]+$/,"",c); sub(/^[a-z0-9]+_stream_sp_/,"",c)} /verdict:/{v=$2} /^ +16 /{$1=""; printf "%-6s %-8s%s\n", c, v, substr($0,1,150)}' "$out/$t.txt"
done
