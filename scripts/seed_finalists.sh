#!/usr/bin/env bash
# Runs every seed through the whole evaluator cascade with the finalist checks (determinism rerun,
# compute-sanitizer memcheck, racecheck, initcheck) on a GPU machine, on the tasks of a suite the seed
# applies to (`sparseditto bench --list` says which), and prints one line a (seed, task) pair.
#   scripts/seed_finalists.sh SPARSEDITTO SUITE OUT_DIR [PARALLEL] [MAX_PER_SEED]
# SPARSEDITTO: the sparseditto binary; SUITE: e.g. configs/suites/seed_finalists.yaml; PARALLEL: pairs run at
# once (default 4: the sanitizers are CPU-bound); MAX_PER_SEED: a seed's first tasks in suite order (default
# 2). Seeds come from the binary's seed library (SEEDS_DIR overrides it, as `bench --seeds`).
# A pair passes when its verdict is CORRECT or SLOWER at stage DONE. Pairs go round-robin over the GPUs
# (CUDA_VISIBLE_DEVICES's entries when it is set, else every GPU nvidia-smi lists; pair i on GPU i mod
# count). Pairs side by side on one GPU share it (their times mean little; the escaped-work check allows
# for it through its idle trials), so every failure is run again alone, on the same GPU, and that run decides.
# Writes OUT_DIR/<seed>__<task>.txt (the eval reports; .alone.txt for reruns) and OUT_DIR/summary.txt.
# Exit status: 0 when every pair passes, 1 when one fails (or none ran), 2 on bad usage.
# Stopped by TERM or INT to its process group (what `timeout` sends), it still writes the summary: pairs
# that finished as above, the rest "not finished", failures without their rerun alone; exit status 1.
set -uo pipefail
[[ $# -ge 3 && $# -le 5 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
sd="$1"; suite="$2"; out="$3"; parallel="${4:-4}"; max_per_seed="${5:-2}"
[[ "$parallel" =~ ^[1-9][0-9]*$ && "$max_per_seed" =~ ^[1-9][0-9]*$ ]] || { echo "seed_finalists: PARALLEL and MAX_PER_SEED are positive integers" >&2; exit 2; }
mkdir -p "$out" || exit 1
seeds_arg=(); [[ -n "${SEEDS_DIR:-}" ]] && seeds_arg=(--seeds "$SEEDS_DIR")

# The pairs: task, seed, file, at most MAX_PER_SEED tasks a seed, in suite order.
if ! "$sd" bench --suite "$suite" --list "${seeds_arg[@]}" > "$out/list.tsv" 2> "$out/list.err"; then
  echo "seed_finalists: bench --list failed: $(head -3 "$out/list.err")" >&2; exit 1
fi
awk -F'\t' -v max="$max_per_seed" 'NF == 3 && ++seen[$2] <= max' "$out/list.tsv" > "$out/pairs.tsv"
[[ -s "$out/pairs.tsv" ]] || { echo "seed_finalists: no seed applies to any task of $suite" >&2; exit 1; }

# The GPUs pairs go round-robin over, comma-separated ("" = leave the device choice to CUDA).
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then gpus="$CUDA_VISIBLE_DEVICES"
else gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr -d ' ' | grep -E '^[0-9]+$' | paste -sd, -)
fi
awk -F'\t' -v OFS='\t' '{ print $0, NR - 1 }' "$out/pairs.tsv" > "$out/pairs_indexed.tsv"

# One pair: eval --finalist into OUT_DIR/<seed>__<task><suffix>.txt, on GPU (index mod count) of $gpus.
run_pair() {  # task seed file suffix index
  local list on_gpu=()
  IFS=, read -ra list <<< "$gpus"
  (( ${#list[@]} > 0 )) && on_gpu=(env "CUDA_VISIBLE_DEVICES=${list[$(( $5 % ${#list[@]} ))]}")
  "${on_gpu[@]}" "$sd" eval --task "$suite" --name "$1" --kernel "$3" --finalist --timing-seconds 0.05 --min-trials 5 \
    --stage-timeout 120 --cache "$out/cache" < /dev/null > "$out/$2__$1$4.txt" 2>&1
}
# "VERDICT STAGE" of a report ("- -" when it has none).
verdict_of() {
  sed -nE 's/^ *verdict: ([A-Z_]+) +\(stage reached: ([A-Z_]+)\).*/\1 \2/p' "$1" | head -1 | grep . || echo "- -"
}
passes() { [[ "$1" == CORRECT || "$1" == SLOWER ]] && [[ "$2" == DONE ]]; }

export -f run_pair; export sd suite out gpus
stopped=0
trap 'stopped=1' TERM INT  # the pairs (children: default action) die; the summary below is still written
tr '\t\n' '\0\0' < "$out/pairs_indexed.tsv" | xargs -0 -n 4 -P "$parallel" bash -c 'run_pair "$0" "$1" "$2" "" "$3"'

{
  printf '%-20s %-28s %-9s %-19s %s\n' seed task verdict stage note
  while IFS=$'\t' read -r task seed file index; do
    read -r verdict stage <<< "$(verdict_of "$out/${seed}__${task}.txt")"
    note=""
    if [[ "$verdict" == - ]] && ((stopped)); then
      note="not finished: FAILS (the run was stopped)"
    elif ! passes "$verdict" "$stage" && ((stopped)); then
      note="not run again alone: FAILS (the run was stopped)"
    elif ! passes "$verdict" "$stage"; then  # again, alone: that run decides
      note="run again alone (first: $verdict at $stage)"  # what sharing the GPU did, kept beside the verdict that counts
      run_pair "$task" "$seed" "$file" ".alone" "$index"
      read -r verdict stage <<< "$(verdict_of "$out/${seed}__${task}.alone.txt")"
      passes "$verdict" "$stage" || { note="$note: FAILS ($(grep -m1 -E '^ *detail:' "$out/${seed}__${task}.alone.txt" | sed 's/^ *detail: //' | cut -c1-120))"; }
    fi
    printf '%-20s %-28s %-9s %-19s %s\n' "$seed" "$task" "$verdict" "$stage" "$note"
  done < "$out/pairs_indexed.tsv"
} | tee "$out/summary.txt"
((stopped)) && { echo "seed_finalists: stopped before every pair finished; $out/summary.txt says which did" >&2; exit 1; }
if grep -q "FAILS" "$out/summary.txt"; then exit 1; fi
exit 0
