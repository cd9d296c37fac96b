#!/bin/bash
# Session 10 call 1 (prepared in session 9): GPU tests alone (the corpus did not finish in s9 call 5), then the
# finalists of every seed, 6 pairs at once, on a package built at d95753b or later (escaped-work check allows
# twice the idle trial: the two pairs s9 call 5 still refused under sharing should now pass).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s)
trap 'cd $OUT && rm -rf fin/cache && tar czf r1.tgz fin gpu 2>/dev/null; rm -rf fin gpu' EXIT
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $OUT/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200"
echo "device_run done at $(( $(date +%s) - T0 )) s"
SEEDS_DIR=$PWD/kernels/seeds timeout 260 scripts/seed_finalists.sh $PWD/.device/dist/bin/sparseditto configs/suites/seed_finalists.yaml $OUT/fin 6 1
echo "seed_finalists rc $? after $(( $(date +%s) - T0 )) s"
