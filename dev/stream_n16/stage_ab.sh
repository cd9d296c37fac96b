#!/bin/bash
# Lab A/B (run from the repository root on a GPU node): nm24_stream_sp with STAGE_A 0 (A streamed through registers,
# two batches a DRAM round trip) and 1 (each warp's whole K range copied into shared memory at the start, where
# the plan finds room: 2:4 4096 x 4096 n = 16, whose 13-tile ranges are a chain of round trips) on n16.yaml's four
# 2:4 shapes, each one `sparseditto eval` of both (verified on the task's shapes, timed 0.3 s against the
# baselines). The long-K shapes do not stage, so they should read alike: a check that the other path is untouched.
#   dev/stream_n16/stage_ab.sh SPARSEDITTO OUT_DIR [LIMIT_S]
here=$(cd "$(dirname "$0")" && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=${3:-120}; start=$(date +%s)
mkdir -p "$out/v"; ks=()
for st in 0 1; do
  f="$out/v/nm24_stream_sp_stage$st.cu"; cp kernels/seeds/nm24_stream_sp.cu "$f"
  sed -i -E "s/^#define STAGE_A [0-9]+ /#define STAGE_A $st /" "$f"; ks+=(--kernel "$f")
done
for t in nm24_4096x4096 nm24_8192x8192 nm24_4096x11008 nm24_11008x4096; do
  left=$(( limit - ($(date +%s) - start) )); [ $left -lt 20 ] && { echo "stage_ab: out of time before $t"; break; }
  timeout $left "$sd" eval --task "$here/n16.yaml" --name $t "${ks[@]}" --task-shapes-only --timing-seconds 0.3 --cache "$out/cache" > "$out/$t.txt" 2>&1
  echo "== $t (exit $?, $(( $(date +%s) - start )) s)"
  awk '/^candidate /{c=$2; sub(/-[0-9a-f]+$/,"",c)} /verdict:/{v=$2} /^ +16 /{$1=""; printf "%-26s %-8s%s\n", c, v, substr($0,1,120)}' "$out/$t.txt"
done
