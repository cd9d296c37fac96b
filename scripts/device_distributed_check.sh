#!/usr/bin/env bash
# The GPU check of distributed mode (issue 25): one task searched through `sparseditto coordinator
# --serve`, one `sparseditto evaluator` and `sparseditto client submit --watch` / status / export on
# loopback, then by embedded `sparseditto search` with the same budget on the same machine, so the two
# confirmed results can be compared. Run it on a GPU node from a bundle of scripts/package_gpu.sh.
#   scripts/device_distributed_check.sh PACKAGE_DIR TASK.yaml OUT_DIR [dist|embedded|both]
# Environment: SEARCH_OPTIONS (default "--compile-ahead 16 --finalists 1 --confirm-rounds 2"),
# EVALUATOR_UMASK (default 022: the umask the evaluator is started under).
set -uo pipefail
[[ $# -ge 3 ]] || { echo "usage: $0 PACKAGE_DIR TASK.yaml OUT_DIR [dist|embedded|both]" >&2; exit 2; }
pkg=$(realpath "$1"); task=$(realpath "$2"); out="$3"; mode="${4:-both}"
B="$pkg/bin/sparseditto"
opts=(${SEARCH_OPTIONS:---compile-ahead 16 --finalists 1 --confirm-rounds 2} --log-interval 30)
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$out"
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT
token() { od -An -N24 -tx1 /dev/urandom | tr -d ' \n'; }

distributed() {
  local w="$work/dist" e c
  mkdir -p "$w"; e=$(token); c=$(token)
  (umask 077; printf 'evaluator %s\nclient %s\n' "$e" "$c" > "$w/tokens"; echo "$e" > "$w/e.token"; echo "$c" > "$w/c.token")
  "$B" coordinator --serve --listen 127.0.0.1:0 --address-file "$w/addr" --tokens "$w/tokens" --runs-dir "$w/runs" \
    "${opts[@]}" > "$out/coordinator.out" 2> "$out/coordinator.err" &
  local coordinator=$!
  for _ in $(seq 100); do [[ -s "$w/addr" ]] && break; sleep 0.2; done
  local address; address=$(cat "$w/addr")
  (umask "${EVALUATOR_UMASK:-022}"; exec "$B" evaluator --coordinator "$address" --token-file "$w/e.token" --gpu 0 \
     --cache "$w/cache" > "$out/evaluator.out" 2> "$out/evaluator.err") &
  local evaluator=$! start; start=$(date +%s)
  "$B" client submit "$task" --run check --watch --coordinator "$address" --token-file "$w/c.token" > "$out/watch.out" 2>&1
  echo "distributed: client submit --watch exit $? after $(( $(date +%s) - start )) s"
  "$B" client status check --coordinator "$address" --token-file "$w/c.token"
  "$B" client export check --out "$out/kernels" --coordinator "$address" --token-file "$w/c.token"
  kill -TERM "$evaluator"; wait "$evaluator"; echo "evaluator exit $? ($(tail -1 "$out/evaluator.err"))"
  kill -TERM "$coordinator"; wait "$coordinator"; echo "coordinator exit $?"
  grep -E "result|best seed" "$out/watch.out"
}

embedded() {
  local w="$work/embedded" start; start=$(date +%s)
  "$B" search "$task" --run check --runs-dir "$w/runs" --cache "$w/cache" "${opts[@]}" > "$out/search.out" 2> "$out/search.err"
  echo "embedded: search exit $? after $(( $(date +%s) - start )) s"
  "$B" status check --runs-dir "$w/runs"
  grep -E "result|best seed" "$out/search.out" "$out/search.err"
}

nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
[[ "$mode" == embedded ]] || distributed
[[ "$mode" == dist ]] || embedded
