#!/bin/bash
# Session 9 call 0: GPU tests on the package (first after the static-screen fix 8a6541a), then call2 (dense bind-once).
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
T0=$(date +%s)
scripts/device_run.sh .device/dist .device/data /work/main $OUT/gpu 2>&1 | tail -40
echo "device_run done at $(( $(date +%s) - T0 )) s"
.device/s9/call2.sh
echo "all done at $(( $(date +%s) - T0 )) s"
