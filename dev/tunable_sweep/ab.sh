#!/usr/bin/env bash
# Lab A/B (run from the repository root on a GPU node): one seed at its defaults against variants of it, each with
# one declared tunable set (NAME=VALUE), in one `sparseditto eval` on one task at its own shapes (verified, timed
# 0.3 s against the baselines). Prints a line a candidate for every n of the task; the eval's whole output is
# OUT_DIR/SEED.TASK.txt (and its last lines are printed when eval fails).
#   dev/tunable_sweep/ab.sh SPARSEDITTO OUT_DIR LIMIT_S SEED TASK_FILE TASK NAME=VALUE...
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); sd=$(realpath "$1"); out=$(realpath -m "$2"); limit=$3; seed=$4; tf=$5; t=$6; shift 6
(( limit >= 20 )) || { echo "ab: out of time before $seed on $t"; exit 0; }
mkdir -p "$out/v"
ks=(--kernel "$root/kernels/seeds/$seed.cu")
source "$root/dev/tunable_sweep/set_tunable.sh"
for nv in "$@"; do  # the seed with that one value
  f="$out/v/${seed}__$nv.cu"
  set_tunable "$root/kernels/seeds/$seed.cu" "$f" "$nv" || exit 2
  ks+=(--kernel "$f")
done
start=$(date +%s); log="$out/$seed.$t.txt"
timeout "$limit" "$sd" eval --task "$tf" --name "$t" "${ks[@]}" --task-shapes-only --timing-seconds 0.3 --cache "$out/cache" > "$log" 2>&1
rc=$?
echo "== $seed on $t (exit $rc, $(( $(date +%s) - start )) s)"
awk '/^candidate /{c=$2; sub(/-[0-9a-f]+$/,"",c)} /verdict:/{v=$2} /^ +[0-9]+ +[0-9.]+ /{n=$1; $1=""; printf "%-34s %5s %-8s%s\n", c, n, v, substr($0,1,110)}' "$log"
(( rc == 0 )) || tail -5 "$log" | cut -c1-200
