#!/bin/bash
# Session 9 call 3 (prepared in session 8): every seed through the whole cascade with the finalist checks
# (scripts/seed_finalists.sh on configs/suites/seed_finalists.yaml; 6 pairs at once, each seed's first two
# tasks; failures rerun alone). Needs .device/dist built at f810316 or later (bench --list).
set -u
cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s)
SEEDS_DIR=$PWD/kernels/seeds timeout 560 scripts/seed_finalists.sh $PWD/.device/dist/bin/sparseditto configs/suites/seed_finalists.yaml $OUT/fin 6 2
echo "seed_finalists rc $? after $(( $(date +%s) - T0 )) s"
rm -rf $OUT/fin/cache
