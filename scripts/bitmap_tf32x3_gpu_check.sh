#!/usr/bin/env bash
# Checks the bitmap_tf32x3 seed (fp32 SpMM on tensor cores with 3xTF32) on a GPU machine, from a checkout:
#  1. eval --finalist (determinism rerun, compute-sanitizer memcheck, racecheck, initcheck) on
#     fin_unstructured80_fp32 of configs/suites/seed_finalists.yaml (ragged shapes, n = 1 and odd n) and on the
#     DLMC 512 x 512 q projection at 90% (its n = 256 takes the widest n tile; at n = 32 and 128 the grid is small
#     enough that K is split over CTAs: the workspace path);
#  2. bench of this seed alone on the DLMC fp32 tasks of configs/suites/dlmc.yaml whose names match NAME_REGEX
#     (default: all 36): its time at each n against cuBLAS dense and cuSPARSE CSR (issue 27's row "dlmc fp32,
#     over cuSPARSE CSR");
#  3. eval of tunable variants beside the default on two DLMC matrices at 90% (FFN conv1 2048 x 512, q
#     projection 512 x 512), so a fixed-cost change shows at each n.
#   [STEPS="finalist bench variants"] scripts/bitmap_tf32x3_gpu_check.sh SPARSEDITTO OUT_DIR [NAME_REGEX]
# SPARSEDITTO: the sparseditto binary (e.g. build/bin/sparseditto); STEPS: which of the three to run (default
# all; each takes minutes: run them one at a time under a per-command time limit). Writes
# OUT_DIR/finalist_<task>.txt, OUT_DIR/bench/bench.txt (.json, .csv; `--resume` is passed, so a run cut short
# continues where it stopped), OUT_DIR/variants_<task>.txt, and prints each verdict and the bench table. Exit
# status: 0 when the finalist checks pass and bench ran (those that were run), 1 otherwise, 2 on bad usage.
set -uo pipefail
[[ $# -ge 2 && $# -le 3 ]] || { sed -n '2,20p' "$0" >&2; exit 2; }
sd=$(realpath "$1"); out="$2"; names="${3:-_fp32\$}"; steps=" ${STEPS:-finalist bench variants} "
root=$(cd "$(dirname "$0")/.." && pwd)
seed="$root/kernels/seeds/bitmap_tf32x3.cu"
[[ -x "$sd" ]] || { echo "bitmap_tf32x3_gpu_check: no sparseditto binary at $1" >&2; exit 2; }
mkdir -p "$out/seeds" "$out/variants" || exit 1
out=$(realpath "$out")
cp "$seed" "$out/seeds/" || exit 1
cd "$root" || exit 1
verdict_of() {  # "VERDICT STAGE" lines of an eval report
  sed -nE 's/^ *verdict: ([A-Z_]+) +\(stage reached: ([A-Z_]+)\).*/\1 \2/p' "$1"
}
status=0

for pair in "configs/suites/seed_finalists.yaml fin_unstructured80_fp32" \
            "configs/suites/dlmc.yaml dlmc_encoder_sa_q_s900001525879_fp32"; do
  [[ "$steps" == *" finalist "* ]] || break
  read -r suite task <<< "$pair"
  "$sd" eval --task "$suite" --name "$task" --kernel "$seed" --finalist --cache "$out/cache" \
    > "$out/finalist_$task.txt" 2>&1
  got=$(verdict_of "$out/finalist_$task.txt" | head -1)
  echo "finalist $task: ${got:-no verdict (see $out/finalist_$task.txt)}"
  [[ "$got" == "CORRECT DONE" || "$got" == "SLOWER DONE" ]] || status=1
done

if [[ "$steps" == *" bench "* ]]; then
  "$sd" bench --suite configs/suites/dlmc.yaml --name "$names" --seeds "$out/seeds" --out "$out/bench" \
    --cache "$out/cache" --resume > "$out/bench.log" 2>&1 || { echo "bench failed: see $out/bench.log"; status=1; }
  [[ -f "$out/bench/bench.txt" ]] && cat "$out/bench/bench.txt"
fi
[[ "$steps" == *" variants "* ]] || exit $status

# Variants: a name, then the tunables it changes and their values (the default is the seed itself).
variants=("split0 SPLIT_CTAS_PER_SM 0" "split2 SPLIT_CTAS_PER_SM 2" "ntile32 N_TILE 32" "ntile128 N_TILE 128"
          "wm1 WARPS_M 1" "wm4 WARPS_M 4" "wm4_split0 WARPS_M 4 SPLIT_CTAS_PER_SM 0" "wk2 WARPS_K 2"
          "tilek16 TILE_K 16" "tilek64 TILE_K 64" "stages4 STAGES 4" "presplit A_PRESPLIT 1" "one_acc SMALL_ACC 0"
          "offsets SLOT_EXTRA_KB 0")
kernels=(--kernel "$seed")
for v in "${variants[@]}"; do
  read -r name changes <<< "$v"
  file="$out/variants/bitmap_tf32x3_$name.cu"
  cp "$seed" "$file" || exit 1
  read -ra pairs <<< "$changes"
  for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do
    sed -i -E "s/^#define ${pairs[i]} [0-9]+ /#define ${pairs[i]} ${pairs[i + 1]} /" "$file"
  done
  cmp -s "$seed" "$file" && { echo "variant $name changes nothing: a tunable not found in the seed" >&2; status=1; continue; }
  kernels+=(--kernel "$file")
done
for task in dlmc_encoder_ffn_conv1_s900000572205_fp32 dlmc_encoder_sa_q_s900001525879_fp32; do
  "$sd" eval --task configs/suites/dlmc.yaml --name "$task" "${kernels[@]}" --cache "$out/cache" \
    > "$out/variants_$task.txt" 2>&1
  echo "variants on $task: $out/variants_$task.txt"
  grep -vE 'B spilled$|^  compile:|^  GPU stage wall time' "$out/variants_$task.txt"
done
exit $status
