#!/bin/bash
# Session 14 call 8: dense_stream with CTAS_PER_SM 2 (the default now; ds_c2 of call 7) through the finalist
# checks on two fin tasks.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r8; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r8.tgz -C /tmp r8' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; K=kernels/seeds
for f in fin_unstructured85_fp16 fin_block64_80_bf16; do
  timeout 90 $SD eval --task configs/suites/seed_finalists.yaml --name $f --kernel $K/dense_stream.cu --finalist --timing-seconds 0.05 --min-trials 5 --stage-timeout 80 --cache /tmp/c8 > $R/fin_$f.txt 2>&1 &
done
wait
for f in fin_unstructured85_fp16 fin_block64_80_bf16; do echo "finalist $f at $(el) s"; grep -E "verdict|correctness|sanitizer|determin" $R/fin_$f.txt | head; done
