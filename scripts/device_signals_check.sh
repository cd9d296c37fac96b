#!/usr/bin/env bash
# The GPU check of `sparseditto search`'s stop on a signal (issue 26 item 4): the task searched on the
# local GPU, SIGTERM sent once STOP_AFTER evaluation events are in runs/<run>/events.jsonl, the exit code
# checked (143), then the same command run again to the end; prints the evaluation events, the distinct
# candidates they name and the store's count (`status`), which must agree. Run it on a GPU node from a
# bundle of scripts/package_gpu.sh (or a build tree: PACKAGE_DIR/bin/sparseditto).
#   scripts/device_signals_check.sh PACKAGE_DIR TASK.yaml OUT_DIR
# Environment: MAX_EVALUATIONS (default 24), STOP_AFTER (default 8), SEARCH_OPTIONS (default
# "--compile-ahead 8 --finalists 1 --confirm-rounds 0").
set -uo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 PACKAGE_DIR TASK.yaml OUT_DIR" >&2; exit 2; }
pkg=$(realpath "$1"); task=$(realpath "$2"); out=$(realpath -m "$3")
B="$pkg/bin/sparseditto"
max="${MAX_EVALUATIONS:-24}"; stop_after="${STOP_AFTER:-8}"
opts=(${SEARCH_OPTIONS:---compile-ahead 8 --finalists 1 --confirm-rounds 0} --max-evaluations "$max"
      --run sigcheck --runs-dir "$out/runs" --log-file "$out/search.log" --log-interval 30)
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$out"
events="$out/runs/sigcheck/events.jsonl"
# grep -c prints 0 and fails when nothing matches, so no `|| echo 0` (that gave "0\n0").
count() { local c; c=$(grep -c '"type":"evaluation"' "$events" 2>/dev/null); echo "${c:-0}"; }

"$B" search "$task" "${opts[@]}" > "$out/first.out" 2> "$out/first.err" &
search=$!
while kill -0 "$search" 2>/dev/null && (( $(count) < stop_after )); do sleep 1; done
kill -TERM "$search" 2>/dev/null
wait "$search"; first=$?
echo "first command: exit $first (143 expected), $(count) evaluation events; its last event:"
tail -n 1 "$events"
"$B" search "$task" "${opts[@]}" > "$out/second.out" 2> "$out/second.err"; second=$?
echo "second command: exit $second (0 expected)"
cat "$out/second.out"
distinct=$(grep '"type":"evaluation"' "$events" | sed 's/.*"candidate":"\([^"]*\)".*/\1/' | sort -u | wc -l)
echo "evaluation events $(count), distinct candidates $distinct (equal: none evaluated twice)"
"$B" status sigcheck --runs-dir "$out/runs" | grep -E "evaluations|in flight"
[[ $first -eq 143 && $second -eq 0 && $(count) -eq $distinct ]]
