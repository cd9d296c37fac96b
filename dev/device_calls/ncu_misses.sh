#!/usr/bin/env bash
# ncu evidence for issue 27's misses that have none yet (one launch each, scripts/ncu_profile.sh, ~60 s a row):
# the best seed of each row on misses.yaml's one-n tasks, and a DLMC fp16 row's fixed cost. Prints each
# profile's headline (duration, DRAM and SM throughput, occupancy) and tars the details into $OUT.
#   LIMIT=560 bash dev/device_calls/ncu_misses.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
N=dist/ncu; mkdir -p $N
# SET=s11: the rows profiled first (2026-12-07, eleventh session); SET=s12 (default): the misses still without one.
s11=(
  "dev/device_calls/misses.yaml miss_u70_4096_n16 kernels/seeds/dense_stream.cu DenseStreamKernel"
  "dev/device_calls/misses.yaml miss_u70_4096_n16 kernels/seeds/u24_stream_sp.cu U24StreamKernel"
  "dev/device_calls/misses.yaml miss_block64_90_4096_n2048 kernels/seeds/bsr_wgmma.cu BsrWgmma"
  "dev/device_calls/misses.yaml miss_block32_90_4096_n2048 kernels/seeds/bsr_mma.cu BsrMmaKernel"
  "dev/device_calls/misses.yaml miss_nm24_4096_n128 kernels/seeds/nm24_wgmma_sp.cu Nm24WgmmaSpKernel"
  "configs/suites/dlmc.yaml dlmc_encoder_sa_q_s900001525879_fp16 kernels/seeds/csr_warp_per_row.cu WarpPerRowSpmm"
)
s12=(
  "dev/device_calls/misses.yaml miss_nm24_4096_n16 kernels/seeds/nm24_stream_sp.cu Nm24StreamKernel"
  "dev/device_calls/misses.yaml miss_nm24_4096x11008_n2048 kernels/seeds/nm24_wgmma_sp.cu Nm24WgmmaSpKernel"
  "dev/device_calls/misses.yaml miss_u90_4096_n16 kernels/seeds/u14_stream_sp.cu U14StreamKernel"
  "configs/suites/dlmc.yaml dlmc_encoder_ffn_conv2_s950000762939_fp32 kernels/seeds/csr_warp_per_row.cu WarpPerRowSpmm"
)
if [[ "${SET:-s12}" == s11 ]]; then rows=("${s11[@]}"); else rows=("${s12[@]}"); fi
for row in "${rows[@]}"; do
  read -r suite task kernel regex <<< "$row"
  (( $(left) > 100 )) || { echo "no time left for $task"; continue; }
  name="$task.$(basename "$kernel" .cu)"
  echo "=== $name"
  timeout 150 scripts/ncu_profile.sh "$SD" "$suite" "$task" "$kernel" "$regex" "$N/$name" > "$N/$name.log" 2>&1
  echo "exit $?"
  grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Grid Size|Waves Per SM|L2 Hit Rate) " "$N/$name/details.txt" 2>/dev/null | head -12
done
tar -C dist --exclude='*.ncu-rep' --exclude='raw.csv' --exclude='bin' -cJf $OUT/ncu.tar.xz ncu
echo "done, left $(left)s"
