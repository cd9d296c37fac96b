#!/bin/bash
# Session 9 call 5 (package at 4cfe15d: idle-trial allowance in the escaped-work check): the seeds whose
# finalists were lost to the shared-GPU false WRONG in call 3 (one task each, 6 at once), and beside them the
# evaluator and adversarial-corpus GPU tests (more sharing of the GPU, on purpose).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s)
trap 'cd $OUT && rm -rf fin/cache && tar czf r5.tgz fin gpu 2>/dev/null; rm -rf fin gpu' EXIT
(SEEDS_DIR=$PWD/kernels/seeds timeout 250 scripts/seed_finalists.sh $PWD/.device/dist/bin/sparseditto .device/s9/fin_rest.yaml $OUT/fin 6 1 > $OUT/fin_summary.txt 2>&1; echo "seed_finalists rc $? after $(( $(date +%s) - T0 )) s" >> $OUT/fin_summary.txt) &
timeout 250 scripts/device_run.sh .device/dist .device/data /work/main $OUT/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200" 
echo "device_run done at $(( $(date +%s) - T0 )) s"
wait
cat $OUT/fin_summary.txt
