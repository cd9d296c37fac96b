#!/usr/bin/env bash
# Packs built binaries with the shared libraries they need into a folder that runs on a GPU node
# lacking our Debian packages (gRPC, protobuf, Abseil, RocksDB, yaml-cpp, ...).
#   scripts/package_gpu.sh OUT_DIR BINARY...
# Result: OUT_DIR/bin/<binaries> with RUNPATH $ORIGIN/../lib, OUT_DIR/lib/<libraries>, and
# OUT_DIR/share/sparseditto/sparseditto_kernel.h and sparseditto_weight_check.h, seeds/ and prompts/ (the LLM
# mutators' prompt templates), and OUT_DIR/bin/torch_timings.py (the PyTorch timings of an `export --torch`;
# needs only torch there).
# Not packed: the C/C++ runtime (glibc, libstdc++, libgcc; the node's are newer and compatible), the
# CUDA driver (must match the node's kernel module) and the CUDA toolkit's libraries (the node has its
# own CUDA toolkit; cudart, cuBLAS and cuSPARSE are taken from there).
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: $0 OUT_DIR BINARY..." >&2; exit 2; }
out="$1"; shift
command -v patchelf >/dev/null || { echo "package_gpu: patchelf missing (scripts/setup.sh installs it)" >&2; exit 1; }
mkdir -p "$out/bin" "$out/lib"

skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so|libcudart|libcublas|libcusparse|libnvrtc|libnvJitLink|libnvidia)'
for binary in "$@"; do
  [[ -f "$binary" ]] || { echo "package_gpu: no such binary: $binary" >&2; exit 1; }
  cp -f "$binary" "$out/bin/"
  patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/$(basename "$binary")"
  ldd "$binary" | awk '/=> \// {print $1, $3}' | while read -r name path; do
    [[ "$name" =~ $skip ]] && continue
    [[ -f "$out/lib/$name" ]] || cp -L "$path" "$out/lib/$name"
  done
done
for lib in "$out"/lib/*.so*; do patchelf --set-rpath '$ORIGIN' "$lib"; done
# Candidates compile against the ABI header at run time (cli/install_paths.h looks here).
mkdir -p "$out/share/sparseditto"
cp -f "$(dirname "$0")/../kernel_abi/sparseditto_kernel.h" "$(dirname "$0")/../kernel_abi/sparseditto_weight_check.h" \
  "$out/share/sparseditto/"
mkdir -p "$out/share/sparseditto/seeds"
cp -f "$(dirname "$0")"/../kernels/seeds/*.cu "$out/share/sparseditto/seeds/" 2>/dev/null || true
rm -f "$out"/share/sparseditto/seeds/*_test.cu
mkdir -p "$out/share/sparseditto/prompts"
cp -f "$(dirname "$0")"/../configs/prompts/*.txt "$out/share/sparseditto/prompts/"
cp -f "$(dirname "$0")/torch_timings.py" "$out/bin/"
echo "package_gpu: $(ls "$out/bin" | wc -l) binaries, $(ls "$out/lib" | wc -l) libraries, $(du -sh "$out" | cut -f1) in $out"
