#!/usr/bin/env bash
# Installs the Debian 12 packages SparseDitto builds against, then builds it.
# Idempotent: packages already present are left alone. Works as root or through sudo.
#   scripts/setup.sh            install packages and build (Release) into build/
#   scripts/setup.sh --deps-only  install packages only
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev librocksdb-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev
  libfmt-dev libspdlog-dev libcurl4-openssl-dev libgtest-dev libgmock-dev libbenchmark-dev
  patchelf
  libssl-dev openssl
  libseccomp-dev
  libcpp-httplib-dev
  python3-dev python3-torch libtorch-dev
  libdtl-dev chromium
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  if [[ $(id -u) -eq 0 ]]; then SUDO=(); else SUDO=(sudo); fi
  echo "setup: installing ${missing[*]}"
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q
  "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all Debian packages present"
fi

if ! command -v nvcc >/dev/null 2>&1 && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "setup: nvcc not found; install the CUDA toolkit (12.x or 13.x) into /usr/local/cuda" >&2
  exit 1
fi

[[ "${1:-}" == "--deps-only" ]] && exit 0

export PATH="/usr/local/cuda/bin:$PATH"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${CMAKE_BUILD_TYPE:-Release}"
cmake --build build
