#!/usr/bin/env bash
# Lab (run from the repository root on a GPU node, after dev/device_calls/setup.sh's unpacking): does the candidate
# path's +0.6-0.9 us against the same cuBLAS call as a baseline come from trials enqueued back to back? The probe
# (probe.cu) says one trial a synchronise reads ~0.6 us less than a batch of 20; the product's batches hold up to 50
# (problem_run_timing.cc, SPARSEDITTO_MAX_BATCH_TRIALS 2..200 overrides). Benches dense_cublas alone against
# cublas_dense on the six DLMC encoder_sa_q fp16 tasks at a cap of 2 and of 50 and prints bench's offset note of each.
#   dev/harness_bias/batch_size.sh SPARSEDITTO OUT_DIR
sd=$(realpath "$1"); out=$(realpath -m "$2"); mkdir -p "$out/seeds"
cp kernels/seeds/dense_cublas.cu "$out/seeds/"
for cap in 2 50; do
  SPARSEDITTO_MAX_BATCH_TRIALS=$cap timeout 200 "$sd" bench --suite configs/suites/dlmc.yaml --name '^dlmc_encoder_sa_q_.*_fp16$' \
    --seeds "$out/seeds" --out "$out/cap$cap" --timing-seconds 0.3 > "$out/cap$cap.txt" 2>&1
  echo "== batch cap $cap (exit $?)"
  grep -E "^note: dense_cublas" "$out/cap$cap/bench.txt" | cut -c1-220
done
