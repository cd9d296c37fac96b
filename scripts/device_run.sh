#!/usr/bin/env bash
# Runs the GPU tests from a package made by scripts/package_gpu.sh (every *_gpu_test in it, each with a timeout),
# on a GPU machine that has the CUDA toolkit but none of our Debian packages. The test binaries carry
# the paths of the tree they were built in (SPARSEDITTO_SOURCE_DIR, the runner, the data in data/), so
# this script links BUILT_SOURCE_DIR to this checkout; its data/ holds every matrix the tests read.
#   scripts/device_run.sh PACKAGE_DIR BUILT_SOURCE_DIR LOG_DIR
# The older form with a DATA_DIR second (PACKAGE_DIR DATA_DIR BUILT_SOURCE_DIR LOG_DIR) is still taken;
# its DATA_DIR is not used.
set -uo pipefail
if [[ $# -eq 4 ]]; then
  echo "device_run: DATA_DIR ($2) is not needed any more (the data is in data/ of the checkout); ignored" >&2
  set -- "$1" "$3" "$4"
fi
[[ $# -eq 3 ]] || { echo "usage: $0 PACKAGE_DIR BUILT_SOURCE_DIR LOG_DIR" >&2; exit 2; }
pkg=$(realpath "$1"); built="$2"; logs="$3"
here=$(realpath "$(dirname "$0")/..")
mkdir -p "$logs" "$(dirname "$built")"
[[ "$(realpath "$built" 2>/dev/null)" == "$here" ]] || ln -sfn "$here" "$built"
mkdir -p "$here/build/bin"
# A machine may keep build/ between calls: the tests of an earlier package must not run as this one's.
rm -f "$here"/build/bin/*_gpu_test
cp -f "$pkg"/bin/* "$here/build/bin/"
ln -sfn "$pkg/lib" "$here/build/lib"
export PATH="/usr/local/cuda/bin:$PATH" LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$logs/gpu.txt"
status=0
# The judge's own tests first (a broken judge makes every later verdict meaningless), then every other
# *_gpu_test the package holds (seed tests and the like), so a new GPU test needs no edit here.
# TEST_TIMEOUT: seconds each test may take (default 420).
first=(reference_candidate_gpu_test reference_gemm_gpu_test baselines_gpu_test evaluator_gpu_test
       device_output_check_gpu_test adversarial_corpus_gpu_test kernel_export_gpu_test)
rest=()
for f in "$pkg"/bin/*_gpu_test; do
  name=$(basename "$f")
  [[ " ${first[*]} " == *" $name "* ]] || rest+=("$name")
done
for t in "${first[@]}" "${rest[@]}"; do
  [[ -x "$here/build/bin/$t" ]] || continue
  echo "=== $t"
  timeout "${TEST_TIMEOUT:-420}" "$here/build/bin/$t" >"$logs/$t.log" 2>&1
  rc=$?
  grep -E "^\[  (PASSED|FAILED) |^\[  SKIPPED|Failure|^reference on|^corpus|expected .* got" "$logs/$t.log" | head -60
  echo "=== $t exit $rc"
  ((rc == 0)) || status=1
done
exit $status
