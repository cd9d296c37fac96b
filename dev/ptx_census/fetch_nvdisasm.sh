#!/usr/bin/env bash
# Lab tool (not product code, not CI): puts an nvdisasm where sass.py finds it. The CUDA toolkit here has no
# disassembler (no cuobjdump or nvdisasm), so this takes Debian's (non-free, CUDA 11.8) out of its package without
# installing it: apt reads only a source list of its own in a temporary folder, the system's sources stay as they are.
#   dev/ptx_census/fetch_nvdisasm.sh      (then sass.py finds ~/.cache/sparseditto/nvdisasm-11.8/usr/bin/nvdisasm)
set -euo pipefail
dest="${XDG_CACHE_HOME:-$HOME/.cache}/sparseditto/nvdisasm-11.8"
[[ -x "$dest/usr/bin/nvdisasm" ]] && { echo "$dest/usr/bin/nvdisasm"; exit 0; }
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
cat > "$work/nonfree.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
mkdir -p "$work/lists/partial" "$work/cache/archives/partial"
apt_opts=(-o "Dir::Etc::SourceList=$work/nonfree.sources" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists"
          -o "Dir::Cache=$work/cache" -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$work" && apt-get "${apt_opts[@]}" download nvidia-cuda-toolkit -qq)
mkdir -p "$dest" && dpkg -x "$work"/nvidia-cuda-toolkit_*.deb "$work/x" && mkdir -p "$dest/usr/bin" &&
  cp "$work/x/usr/bin/nvdisasm" "$dest/usr/bin/" && echo "$dest/usr/bin/nvdisasm"
