#!/usr/bin/env bash
# Run here (not on the device: it has no .git): the four stream seeds, bsr_mma and nm24_mma_sp as they were at COMMIT, as seeds of their own
# named <seed>_before.cu in dist/seeds_before, for a device call to bench beside the library (checks_s18a.sh).
#   bash dev/device_calls/seeds_before.sh c4760af
set -euo pipefail
commit="$1"; out=dist/seeds_before
rm -rf "$out" && mkdir -p "$out"
for s in nm24_stream_sp u14_stream_sp u24_stream_sp dense_stream bsr_mma nm24_mma_sp; do git show "$commit:kernels/seeds/$s.cu" > "$out/${s}_before.cu"; done
ls "$out"
