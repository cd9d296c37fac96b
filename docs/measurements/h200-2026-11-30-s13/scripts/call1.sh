#!/bin/bash
# Session 13 call 1 (prepared in session 12), from main at .device/dist/BUILT_FROM. Carry .device/dist,
# .device/data.tgz, .device/s13. About 480 s.
# 1. GPU tests at the head.
# 2. dense_cublaslt (new in s12, never run on a GPU) and csr_packed_rows (MAX_COL_LANES 16 since s12) through
#    the finalist checks: every fin task they apply to (fp32, fp16, bf16; 3 a seed).
# 3. dense_cublaslt against dense_cublas and the cuBLAS baseline on the u50 n = 16 target rows (fp16, the
#    four llm shapes): the target is >= 1.0x cuBLAS dense and the dense seed sits at 0.97-1.00x.
# 4. ncu_profile.sh on a dlmc task with --task-shapes-only (s12's fix): it must profile the (512, 2) launch.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r1; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
cat .device/dist/BUILT_FROM; SD=$PWD/.device/dist/bin/sparseditto; $SD --version
timeout 280 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu 2>&1 | grep -E "^===|PASSED|FAILED|corpus|H200"
echo "gpu tests done at $(el) s"
mkdir -p /tmp/seedsf && cp kernels/seeds/dense_cublaslt.cu kernels/seeds/csr_packed_rows.cu /tmp/seedsf/
SEEDS_DIR=/tmp/seedsf timeout 190 scripts/seed_finalists.sh $SD configs/suites/seed_finalists.yaml $R/fin 4 3
echo "finalists rc $? at $(el) s"; cat $R/fin/summary.txt
for s in 4096x4096 8192x8192 4096x11008 11008x4096; do
  timeout 40 $SD eval --task configs/suites/llm.yaml --name llm_unstructured50_${s}_fp16 --kernel kernels/seeds/dense_cublas.cu --kernel kernels/seeds/dense_cublaslt.cu --timing-seconds 0.15 --stage-timeout 30 --cache /tmp/c1 > $R/u50_$s.txt 2>&1
  echo "u50 $s rc $? at $(el) s"; grep -E "^candidate|verdict|prepare|^ +[0-9]+ +[0-9.]+ " $R/u50_$s.txt | sed -E 's/ on task .*//; s/cusparse_csr [0-9.]+ \([0-9.]+x\) *//' | cut -c1-120
done
timeout 90 scripts/ncu_profile.sh $SD configs/suites/dlmc.yaml dlmc_decoder_ffn_conv1_s900000572205_fp32 kernels/seeds/csr_warp_per_row.cu WarpPerRowSpmm $R/ncu_wpr > $R/ncu.log 2>&1
echo "ncu rc $? at $(el) s"; tail -2 $R/ncu.log; grep -E "Duration|Grid Size|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Achieved Occupancy" $R/ncu_wpr/details.txt | head -8
