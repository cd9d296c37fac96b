#!/bin/bash
# Lab A/B (run from the repository root on a GPU node): u14_stream_sp and u24_stream_sp under their three residual
# tunables, sSfFbB = SPREAD_RESIDUAL S (0: a quad walks its own row pair's residual list; 1: every list spread over the
# warp's eight quads), RESIDUAL_FIRST F (0: walked after the stream; 1: walked while the first two batches land) and
# BALANCE_ROWS B (0: rows stored in order; 1: dealt to the row tiles by nonzero count, heavy rows one a tile), and for
# u24 tT = THIRDS T (third values of up to T groups a record in a second mma.sp instead of the residual; none: 0),
# s0f0b0 being the default (the walk every table timed, its per-entry arithmetic FMAs since 2026-12-07); one `sparseditto eval` a task of skew16.yaml (verified, timed 0.3 s
# against the baselines).
#   dev/skewed_residual/ab.sh SPARSEDITTO OUT_DIR [LIMIT_S]
here=$(cd "$(dirname "$0")" && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=${3:-240}; start=$(date +%s)
mkdir -p "$out/v"; ks=()
variants() { echo s0f0b0 s1f0b0 s0f1b0 s1f1b0 s1f0b1 s1f1b1; [ $1 = u24_stream_sp ] && echo s0f0b0t24 s0f1b0t24 s0f1b1t24 s1f0b1t24 s0f0b0t32; }
for seed in u14_stream_sp u24_stream_sp; do
  for v in $(variants $seed); do
    f="$out/v/${seed}_$v.cu"; cp "kernels/seeds/$seed.cu" "$f"; t=${v:7}
    sed -i -E "s/^#define SPREAD_RESIDUAL [0-9]+ /#define SPREAD_RESIDUAL ${v:1:1} /; s/^#define RESIDUAL_FIRST [0-9]+ /#define RESIDUAL_FIRST ${v:3:1} /; s/^#define BALANCE_ROWS [0-9]+ /#define BALANCE_ROWS ${v:5:1} /; s/^#define THIRDS [0-9]+ /#define THIRDS ${t:-0} /" "$f"
    ks+=(--kernel "$f")
  done
done
for t in u90_skew1_5120x5120 u90_4096x4096 u70_skew05_5120x5120 u70_4096x4096 u90_skew1_13824x5120 u70_4096x11008; do  # skewed first
  left=$(( limit - ($(date +%s) - start) )); [ $left -lt 20 ] && { echo "ab: out of time before $t"; break; }
  timeout $left "$sd" eval --task "$here/skew16.yaml" --name $t "${ks[@]}" --task-shapes-only --timing-seconds 0.3 --cache "$out/cache" > "$out/$t.txt" 2>&1
  echo "== $t (exit $?, $(( $(date +%s) - start )) s)"
  awk '/^candidate /{c=$2; sub(/-[0-9a-f]+$/,"",c)} /verdict:/{v=$2} /^ +16 /{$1=""; printf "%-26s %-8s%s\n", c, v, substr($0,1,120)}' "$out/$t.txt"
done
