# Sourced by the device-call scripts beside it, in the repository root on the device machine.
# Unpacks the package (dist/gpu_*.tar.xz, made by scripts/package_gpu.sh and carried with the call) once a
# machine, links the tree the binaries were built in (BUILT_SOURCE_DIR, default /work/main) to this checkout,
# and defines SD (the sparseditto binary), left (seconds to LIMIT, default 560) and bench_slice.
here=$PWD
pkg_tar=$(ls dist/gpu_*.tar.xz 2>/dev/null | head -1)
[[ -n "$pkg_tar" ]] || { echo "device_calls: no dist/gpu_*.tar.xz carried" >&2; exit 2; }
if [[ ! -f dist/gpu/.from || "$(cat dist/gpu/.from)" != "$pkg_tar" ]]; then
  rm -rf dist/gpu && tar -C dist -xJf "$pkg_tar" && echo "$pkg_tar" > dist/gpu/.from
fi
built="${BUILT_SOURCE_DIR:-/work/main}"
[[ "$(realpath "$built" 2>/dev/null)" == "$here" ]] || { mkdir -p "$(dirname "$built")" && ln -sfn "$here" "$built"; }
export PATH="/usr/local/cuda/bin:$PATH" LD_LIBRARY_PATH="/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
SD="$here/dist/gpu/bin/sparseditto"
T0=$(date +%s)
left() { echo $(( ${LIMIT:-560} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
# bench_slice SUITE NAME DIR [bench args]: a resumable bench (--screen-margin 0.15) stopped by SIGTERM so as to
# end 45 s before LIMIT; DIR is tarred into $OUT. A warm machine keeps DIR from the last call (the newest); a
# fresh one starts from dist/<basename DIR>.tar when it was carried.
bench_slice() {
  local suite="$1" name="$2" dir="$3"; shift 3
  [[ ! -f "$dir/bench.json" && -f "dist/$(basename "$dir").tar" ]] && tar -C "$(dirname "$dir")" -xf "dist/$(basename "$dir").tar"
  mkdir -p "$dir"
  local t=$(( $(left) - 45 ))
  if (( t > 20 )); then
    echo "=== bench $suite '$name' for ${t}s"
    timeout -s TERM "$t" "$SD" bench --suite "$suite" --name "$name" --out "$dir" --resume --screen-margin 0.15 "$@" \
      > "$dir/stdout.txt" 2> "$dir/stderr.txt"
    echo "bench exit $?"
  fi
  tail -3 "$dir/stderr.txt"
  tar -C "$(dirname "$dir")" -cf "$OUT/$(basename "$dir").tar" "$(basename "$dir")"
}
# use_package_bins: the package's binaries at build/bin and its libraries at build/lib, where the scripts and GPU
# tests look for them.
use_package_bins() { mkdir -p build/bin && cp -f dist/gpu/bin/* build/bin/ && ln -sfn "$here/dist/gpu/lib" build/lib; }
# ab_in OUT_DIR LOG SEED TASK_FILE TASK NAME=VALUE...: dev/tunable_sweep/ab.sh given what the call has left (at most
# 80 s, 30 s kept back), its lines appended to LOG.
ab_in() { local out="$1" log="$2"; shift 2; dev/tunable_sweep/ab.sh "$SD" "$out" $(( $(left) - 30 < 80 ? $(left) - 30 : 80 )) "$@" | tee -a "$log"; }
