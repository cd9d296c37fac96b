#!/bin/bash
# Session 12: the whole dlmc suite (72 tasks, 216 rows) at .device/dist/BUILT_FROM, current runner.
# --resume so a second call can finish it if this one runs out (carry the out folder back as .device/s12/dlmc_out).
set -u
cd "$(dirname "$0")/../.."
R=/tmp/rd; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/rd.tgz -C /tmp rd' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
cat .device/dist/BUILT_FROM; SD=$PWD/.device/dist/bin/sparseditto; $SD --version
[ -d .device/s12/dlmc_out ] && cp -r .device/s12/dlmc_out $R/dlmc
timeout 480 $SD bench --suite configs/suites/dlmc.yaml --seeds kernels/seeds --resume --out $R/dlmc --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 15 --cache /tmp/cd > $R/dlmc_stdout.txt 2>&1
echo "dlmc rc $? at $(el)s"; tail -5 $R/dlmc_stdout.txt; tail -4 $R/dlmc/bench.txt; grep -c . $R/dlmc/bench.csv
