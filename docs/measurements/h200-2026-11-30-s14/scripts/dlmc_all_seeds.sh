#!/bin/bash
# The whole dlmc suite over the whole seed library, in a call of its own (about 330 s). Carry .device/dist
# (repackaged at the head), .device/data.tgz, .device/s14.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r1; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto
timeout 540 $SD bench --suite configs/suites/dlmc.yaml --seeds kernels/seeds --resume --out $R/dlmc --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 15 --cache /tmp/cd > $R/dlmc_stdout.txt 2>&1
echo "dlmc rc $? at $(el) s"; tail -3 $R/dlmc/bench.txt; grep -c . $R/dlmc/bench.csv
