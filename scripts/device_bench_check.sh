#!/usr/bin/env bash
# The GPU check of `sparseditto bench` after its loop moved to bench/bench_loop.h (issue 24 item 6,
# issue 26 item 4): a bench of the suite's tasks matching NAME on the local GPU, SIGTERM sent once
# STOP_AFTER evaluation events are in OUT_DIR/events.jsonl, the exit code checked (143), then the same
# command with --resume run to the end; prints the table, the evaluation events and the distinct
# (task, seed) candidates they name (equal: nothing evaluated twice), and each event type's count. Run
# it on a GPU node from a bundle of scripts/package_gpu.sh (or a build tree: PACKAGE_DIR/bin/sparseditto).
#   scripts/device_bench_check.sh PACKAGE_DIR SUITE.yaml NAME OUT_DIR
# Environment: STOP_AFTER (default 4), BENCH_OPTIONS (default "--timing-seconds 0.5").
set -uo pipefail
[[ $# -eq 4 ]] || { echo "usage: $0 PACKAGE_DIR SUITE.yaml NAME OUT_DIR" >&2; exit 2; }
pkg=$(realpath "$1"); suite=$(realpath "$2"); name="$3"; out=$(realpath -m "$4")
B="$pkg/bin/sparseditto"
stop_after="${STOP_AFTER:-4}"
opts=(${BENCH_OPTIONS:---timing-seconds 0.5} --suite "$suite" --name "$name" --out "$out/bench")
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$out"
events="$out/bench/events.jsonl"
# grep -c prints 0 and fails when nothing matches, so no `|| echo 0` (that gave "0\n0").
count() { local c; c=$(grep -c '"type":"evaluation"' "$events" 2>/dev/null); echo "${c:-0}"; }

"$B" bench "${opts[@]}" > "$out/first.out" 2> "$out/first.err" &
bench=$!
while kill -0 "$bench" 2>/dev/null && (( $(count) < stop_after )); do sleep 1; done
kill -TERM "$bench" 2>/dev/null
wait "$bench"; first=$?
echo "first command: exit $first (143 expected), $(count) evaluation events; its last event:"
tail -n 1 "$events"
"$B" bench "${opts[@]}" --resume > "$out/second.out" 2> "$out/second.err"; second=$?
echo "second command (--resume): exit $second (0 expected)"
cat "$out/second.out"
grep -E "kept|set-up failed" "$out/second.err"
distinct=$(grep '"type":"evaluation"' "$events" | sed 's/.*"candidate":"\([^"]*\)".*/\1/' | sort -u | wc -l)
# A REJECTED verdict at TIMING is judged again (BenchLoopOptions::timing_rejection_retries): those evaluations
# are the only ones a candidate may have twice.
retried=$(grep '"type":"evaluation"' "$events" | grep '"outcome":"REJECTED"' | grep -c '"stage":"TIMING"')
echo "evaluation events $(count), distinct candidates $distinct, timing rejections judged again $retried (distinct <= events <= distinct + those: none evaluated twice otherwise)"
sed 's/.*"type":"\([a-z]*\)".*/\1/' "$events" | sort | uniq -c
[[ $first -eq 143 && $second -eq 0 && $(count) -ge $distinct && $(count) -le $((distinct + retried)) ]]
