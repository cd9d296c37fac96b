#!/usr/bin/env bash
# Runs the GPU tests and two `sparseditto eval` reports from a package made by scripts/package_gpu.sh,
# on a GPU machine that has the CUDA toolkit but none of our Debian packages. The test binaries carry
# the paths of the tree they were built in (SPARSEDITTO_SOURCE_DIR, the runner, the data folder), so
# this script recreates them with links: the checkout at BUILT_SOURCE_DIR and DATA_DIR at
# BUILT_SOURCE_DIR/../shared/data.
#   scripts/device_run.sh PACKAGE_DIR DATA_DIR BUILT_SOURCE_DIR LOG_DIR
set -uo pipefail
[[ $# -eq 4 ]] || { echo "usage: $0 PACKAGE_DIR DATA_DIR BUILT_SOURCE_DIR LOG_DIR" >&2; exit 2; }
pkg=$(realpath "$1"); data=$(realpath "$2"); built="$3"; logs="$4"
here=$(realpath "$(dirname "$0")/..")
mkdir -p "$logs" "$(dirname "$built")" "$(dirname "$built")/shared"
[[ "$(realpath "$built" 2>/dev/null)" == "$here" ]] || ln -sfn "$here" "$built"
ln -sfn "$data" "$(dirname "$built")/shared/data"
mkdir -p "$here/build/bin"
cp -f "$pkg"/bin/* "$here/build/bin/"
ln -sfn "$pkg/lib" "$here/build/lib"
export PATH="/usr/local/cuda/bin:$PATH" LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
status=0
for t in reference_candidate_gpu_test reference_gemm_gpu_test baselines_gpu_test evaluator_gpu_test device_output_check_gpu_test \
         adversarial_corpus_gpu_test kernel_export_gpu_test; do
  [[ -x "$here/build/bin/$t" ]] || continue
  echo "=== $t"
  timeout 420 "$here/build/bin/$t" >"$logs/$t.log" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|Failure|^reference on|^corpus|expected .* got" "$logs/$t.log" | head -60
  echo "=== $t exit $rc"
  ((rc == 0)) || status=1
done
exit $status
