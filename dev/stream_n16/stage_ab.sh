#!/bin/bash
# Lab A/B (run from the repository root on a GPU node): nm24_stream_sp and u14_stream_sp with STAGE_A 0 (A streamed
# through registers, two batches a DRAM round trip) and 1 (each warp's whole K range copied into shared memory at
# the start, where the plan finds room: the 4096 x 4096 rows at n = 16, whose short ranges are a chain of round
# trips) on n16.yaml's 2:4 and u90 shapes, each task one `sparseditto eval` of both variants of its seed (verified
# on the task's shapes, timed 0.3 s against the baselines). Shapes that do not stage should read alike.
#   dev/stream_n16/stage_ab.sh SPARSEDITTO OUT_DIR [LIMIT_S]
here=$(cd "$(dirname "$0")" && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=${3:-150}; start=$(date +%s)
mkdir -p "$out/v"
declare -A K
for seed in nm24_stream_sp u14_stream_sp; do
  for st in 0 1; do
    f="$out/v/${seed}_stage$st.cu"; cp kernels/seeds/$seed.cu "$f"
    sed -i -E "s/^#define STAGE_A [0-9]+ /#define STAGE_A $st /" "$f"; K[$seed]+=" --kernel $f"
  done
done
for t in nm24_4096x4096 u90_4096x4096 nm24_8192x8192 u90_8192x8192 nm24_4096x11008 u90_4096x11008; do
  left=$(( limit - ($(date +%s) - start) )); [ $left -lt 20 ] && { echo "stage_ab: out of time before $t"; break; }
  seed=nm24_stream_sp; [[ $t == u90* ]] && seed=u14_stream_sp
  timeout $left "$sd" eval --task "$here/n16.yaml" --name $t ${K[$seed]} --task-shapes-only --timing-seconds 0.3 --cache "$out/cache" > "$out/$t.txt" 2>&1
  echo "== $t (exit $?, $(( $(date +%s) - start )) s)"
  awk '/^candidate /{c=$2; sub(/-[0-9a-f]+$/,"",c)} /verdict:/{v=$2} /^ +16 /{$1=""; printf "%-26s %-8s%s\n", c, v, substr($0,1,120)}' "$out/$t.txt"
done
