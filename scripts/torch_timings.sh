#!/usr/bin/env bash
# The PyTorch timings of issue 26 on a GPU node with PyTorch (CUDA), from a bundle of
# scripts/package_gpu.sh: a brief search of TASKS.yaml (default budget of the file; the issue's two tasks
# are configs/checks/torch_timings.yaml), `export --torch`, then bin/torch_timings.py on the export.
#   scripts/torch_timings.sh PACKAGE_DIR TASKS.yaml OUT_DIR
# Writes OUT_DIR/runs/ (the run), OUT_DIR/export/ (kernels and the package), OUT_DIR/search.log and
# OUT_DIR/table.md (torch_timings.py's output). For an export you already have, run
#   python3 PACKAGE_DIR/bin/torch_timings.py EXPORT_DIR     (the table alone, under 3 minutes).
# Environment: SEARCH_OPTIONS (default "--finalists 1 --confirm-rounds 1"), TIMINGS_OPTIONS (passed to
# torch_timings.py, e.g. "--compile").
set -euo pipefail
[[ $# -eq 3 ]] || { echo "usage: $0 PACKAGE_DIR TASKS.yaml OUT_DIR" >&2; exit 2; }
pkg=$(realpath "$1"); tasks=$(realpath "$2"); out="$3"
B="$pkg/bin/sparseditto"
export PATH="/usr/local/cuda/bin:$PATH"
mkdir -p "$out"
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else "torch sees no CUDA device")'
"$B" search "$tasks" --run torch_timings --runs-dir "$out/runs" ${SEARCH_OPTIONS:---finalists 1 --confirm-rounds 1} \
  > "$out/search.log" 2>&1 || { tail -20 "$out/search.log"; exit 1; }
"$B" export torch_timings --runs-dir "$out/runs" --torch --out "$out/export"
python3 "$pkg/bin/torch_timings.py" "$out/export" ${TIMINGS_OPTIONS:-} | tee "$out/table.md"
