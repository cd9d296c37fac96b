#!/bin/bash
# Session 11 call 1 (prepared in session 10), from main at .device/dist/BUILT_FROM (carry .device/dist,
# .device/data.tgz, .device/s11):
# 1. GPU tests at the head: the corpus has 33 entries (side_stream_join and host_sync_side_stream under
#    the whole-GPU gate), never run as a whole.
# 2. A short real search (8 evaluations) that ends in the finalist stage, then status and export: the
#    first run of the finalist stage on a GPU.
set -u
cd /work/main
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
cat .device/dist/BUILT_FROM
timeout 280 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|side_stream|host_sync|H200"
echo "gpu tests done at $(el) s"
SD=.device/dist/bin/sparseditto
timeout 280 $SD search .device/s11/tiny_search.yaml --run s11 --runs-dir /tmp/runs --finalists 2 > $R/search.txt 2>&1
echo "search rc $? at $(el) s"; tail -5 $R/search.txt
$SD status s11 --runs-dir /tmp/runs > $R/status.txt 2>&1; cat $R/status.txt
$SD export s11 --runs-dir /tmp/runs --out $R/export > $R/export.txt 2>&1; grep -hE "Candidate|Checks|sanitizer|Finalist|Warning" $R/export/*.cu
