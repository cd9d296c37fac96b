#!/bin/bash
# Session 10 call B. RUN WITH wip/whole-gpu-gate CHECKED OUT (rebased on cf13ad3: per-trial escaped-work
# rule, idle trials either side). .device/dist = main cf13ad3, .device/dist_gate = the branch (BUILT_FROM).
# 1. The hole: side_stream_join.cu, main's one-CTA gate vs the whole-GPU gate.
# 2. Honest times under both packages (quiet GPU).
# 3. GPU tests with the gate package (corpus: 32 entries).
# 4. Every seed's finalist pair, 8 at once on the one GPU (the sharing that judged banded WRONG in call 1).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/rB; mkdir -p $R
# dist_gate carries only the runner (the one binary that differs); the rest is main's package.
G=/tmp/dist_gate; rm -rf $G; cp -r .device/dist $G; cp -f .device/dist_gate/bin/sparseditto-runner $G/bin/; cp .device/dist_gate/BUILT_FROM $G/
trap 'rm -rf $R/fin/cache; tar czf $OUT/rB.tgz -C /tmp rB' EXIT
TK=.device/s10/btasks.yaml
timeout 60 .device/dist/bin/sparseditto eval --task $TK --name f_b64_wide --kernel tests/adversarial/side_stream_join.cu --timing-seconds 0.2 --cache /tmp/cBa > $R/hole_old_gate.txt 2>&1
timeout 60 $G/bin/sparseditto eval --task $TK --name f_b64_wide --kernel tests/adversarial/side_stream_join.cu --timing-seconds 0.2 --cache /tmp/cBb > $R/hole_new_gate.txt 2>&1
grep -E "verdict|detail|fitness" $R/hole_*.txt; echo "hole done at $(el) s"
for pkg in .device/dist $G; do
  timeout 60 $pkg/bin/sparseditto eval --task $TK --name b64_4096 --kernel kernels/seeds/bsr_wgmma.cu --kernel kernels/seeds/bsr_mma.cu --timing-seconds 0.2 --cache /tmp/cB$(basename $pkg) > $R/times_$(basename $pkg).txt 2>&1
done
.device/s10/summ.sh $R/times_*.txt; echo "times done at $(el) s"
timeout 200 scripts/device_run.sh $G .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|side_stream|H200"
echo "gpu tests done at $(el) s"
SEEDS_DIR=$PWD/kernels/seeds timeout 250 scripts/seed_finalists.sh $G/bin/sparseditto configs/suites/seed_finalists.yaml $R/fin 8 1
echo "seed_finalists rc $? after $(el) s"
for f in $R/fin/*__*.txt; do printf '%s ' $(basename $f .txt); grep -E "verdict:" $f | head -1 | tr -s ' '; grep -E "detail:|warning: the GPU" $f | head -2; done
