#!/bin/bash
# Session 10 call E, from main (.device/dist = cf13ad3's package; the corpus is read from this checkout).
# 1. The host-sync hole: v/host_sync_short.cu (host_sync_side_stream.cu with SIDE_SPIN_NS 0) through main's
#    runner and the whole-GPU gate's runner (.device/dist_gate/bin/sparseditto-runner, c975c5c).
# 2. The GPU tests, the corpus with host_sync_side_stream.cu (padded: expected WRONG) among 32 entries.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/rE; mkdir -p $R
trap 'tar czf $OUT/rE.tgz -C /tmp rE' EXIT
G=/tmp/dist_gate; rm -rf $G; cp -r .device/dist $G; cp -f .device/dist_gate/bin/sparseditto-runner $G/bin/
TK=configs/suites/seed_finalists.yaml
for pkg in .device/dist $G; do
  timeout 70 $pkg/bin/sparseditto eval --task $TK --name fin_unstructured85_fp16 --kernel .device/s10/v/host_sync_short.cu --kernel tests/adversarial/host_sync_side_stream.cu --kernel kernels/reference/csr_reference.cu --timing-seconds 0.2 --min-trials 5 --cache /tmp/cE$(basename $pkg) > $R/hole_$(basename $pkg).txt 2>&1
  echo "$pkg rc $? at $(el) s"
done
grep -E "^candidate|verdict|detail|fitness|^ +(1|7|16|40) " $R/hole_*.txt
timeout 215 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|host_sync|H200"
echo "gpu tests done at $(el) s"
