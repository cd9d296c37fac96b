#!/bin/bash
# Lab (run from the repository root on a GPU node): the stream seeds in NK against the same tasks in KN (nk16.yaml
# beside this script), each task one `sparseditto eval` of the seed, verified on the task's shapes and timed
# against the baselines in the task's layout. Prints per task the candidates' verdicts and per-n times. Stops at LIMIT_S seconds.
#   dev/stream_n16/nk_eval.sh SPARSEDITTO OUT_DIR [LIMIT_S]
here=$(cd "$(dirname "$0")" && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=${3:-120}; start=$(date +%s); mkdir -p $out
for t in nm24_4096x4096_nk u90_4096x4096_nk u70_4096x4096_nk nm24_1000x4100_nk u90_1000x4100_nk nm24_4096x4096_kn u90_4096x4096_kn u70_4096x4096_kn nm24_4096x11008_nk nm24_4096x11008_kn; do
  left=$(( limit - ($(date +%s) - start) )); [ $left -lt 15 ] && { echo "nk: out of time before $t"; break; }
  seed=nm24_stream_sp; [[ $t == u90* ]] && seed=u14_stream_sp; [[ $t == u70* ]] && seed=dense_stream
  timeout $left "$sd" eval --task "$here/nk16.yaml" --name $t --kernel kernels/seeds/$seed.cu --timing-seconds 0.3 --cache "$out/cache" > "$out/$t.txt" 2>&1
  echo "== $t (exit $?, $(( $(date +%s) - start )) s)"
  grep -E "^candidate |verdict:|^ +[0-9]+ |WRONG|REJECTED|rror" "$out/$t.txt" | cut -c1-200 | head -14
done
rm -rf $out/cache
