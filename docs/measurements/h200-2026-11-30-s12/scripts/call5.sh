#!/bin/bash
# Session 12 call 5: (1) wip/dense-bind-once's dense seed against main's on llm u50 n16 (the u50 target is the
# dense seed's gap to cuBLAS); (2) a tunables sweep of csr_warp_per_row and csr_packed_rows on dlmc fp32 tasks
# (bench runs the defaults); (3) ncu of csr_warp_per_row on a dlmc fp32 task. Carry .device/dist,
# .device/data.tgz, .device/s12.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r5; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r5.tgz -C /tmp r5' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; D=.device/s12/v5; $SD --version
ev() {  # ev LIMIT OUTNAME TASKFILE TASK KERNELS...
  local lim=$1 o=$2 tf=$3 t=$4; shift 4
  timeout $lim $SD eval --task $tf --name "$t" "$@" --timing-seconds 0.1 --stage-timeout 30 --cache /tmp/c5 > $R/$o.txt 2>&1
  echo "$o rc $? at $(el) s" | tee -a $R/steps.txt
}
L=configs/suites/llm.yaml
ev 60 u50_4096_a $L llm_unstructured50_4096x4096_fp16 --kernel $D/dense_main.cu --kernel $D/dense_bind.cu
ev 60 u50_4096_b $L llm_unstructured50_4096x4096_fp16 --kernel $D/dense_bind.cu --kernel $D/dense_main.cu
ev 60 u50_8192_a $L llm_unstructured50_8192x8192_fp16 --kernel $D/dense_main.cu --kernel $D/dense_bind.cu
ALL=""; for f in wpr wpr_rt8 wpr_rt16 wpr_v2 wpr_u8 wpr_tw32 wpr_tw64 wpr_cl8 wpr_b256 pr pr_sb8 pr_blif8 pr_mcl16 pr_gif2 pr_mw16; do ALL="$ALL --kernel $D/$f.cu"; done
Y=configs/suites/dlmc.yaml
for t in dlmc_decoder_ffn_conv1_s900000572205_fp32 dlmc_encoder_sa_q_s900001525879_fp32 dlmc_encoder_ffn_conv2_s900000572205_fp32 dlmc_decoder_ffn_conv1_s700000762939_fp32 dlmc_encoder_ffn_conv1_s980000495911_fp32 dlmc_decoder_ffn_conv1_s900000572205_fp16; do
  ev 50 $t $Y $t $ALL
done
timeout 150 scripts/ncu_profile.sh $SD $Y dlmc_decoder_ffn_conv1_s900000572205_fp32 $D/wpr.cu WarpPerRowSpmm $R/ncu_wpr > $R/ncu.log 2>&1
echo "ncu rc $? at $(el) s" | tee -a $R/steps.txt
for f in $R/*.txt; do case $f in */steps.txt) continue;; esac
  echo "## $(basename $f .txt)"; grep -E "^candidate|verdict:|^ +[0-9]+ +[0-9.]+ " $f | sed -E 's/ on task .*//; s/cusparselt_2to4 absent *//' | cut -c1-120; done
grep -E "Duration|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Achieved Occupancy|Registers Per|Waves Per SM|Grid Size|Block Size|Compute \(SM\) Throughput" $R/ncu_wpr/details.txt | head -20
cat $R/steps.txt
