#!/usr/bin/env bash
# The fifteenth session's second device call (2026-12-07), after checks_s13b.sh: the split probe fixed (its forced
# plans sized shared memory without u14's scratch and wrote past it) run again for u14, both stream seeds' time
# against K beside cuBLAS (`fixed`: the fixed part of an n = 16 launch against the part that grows with the bytes),
# and ncu's warp-state section for nm24_stream_sp and u14_stream_sp at 4096² n = 16 (the rows every n = 16 target
# misses by most).
#   LIMIT=500 bash dev/device_calls/checks_s15b.sh      (carry dist/gpu_*.tar.xz)
set -uo pipefail
source dev/device_calls/setup.sh
L=dist/logs15; mkdir -p $L
for seed in nm24 u14; do
  nvcc -std=c++20 -O3 -arch=sm_90a -I. -Ikernel_abi -DSEED=$seed -o dist/split_$seed dev/stream_plan/split_probe.cu -lcublas &
done
wait
for seed in nm24 u14; do timeout 90 dist/split_$seed fixed | tee $L/fixed_$seed.txt; done
timeout 90 dist/split_u14 | tee $L/split_u14.txt
N=dist/ncu15; mkdir -p $N
for row in "miss_nm24_4096_n16 kernels/seeds/nm24_stream_sp.cu Nm24StreamKernel" \
           "miss_u90_4096_n16 kernels/seeds/u14_stream_sp.cu U14StreamKernel"; do
  read -r task kernel regex <<< "$row"
  (( $(left) > 90 )) || { echo "no time left for $task"; continue; }
  name="$task.$(basename "$kernel" .cu)"; echo "=== $name"
  timeout 150 scripts/ncu_profile.sh "$SD" dev/device_calls/misses.yaml "$task" "$kernel" "$regex" "$N/$name" > "$N/$name.log" 2>&1
  echo "exit $?"
  awk '/Section: (GPU Speed Of Light Throughput|Warp State Statistics|Occupancy|Launch Statistics)/{p=1} /Section: (Compute Workload|Instruction Statistics|Memory Workload|Source Counters)/{p=0} p' "$N/$name/details.txt" 2>/dev/null | grep -vE "^ *-+ *$|^ *$" | cut -c1-150 | head -70
done
cp -r $N $L/ 2>/dev/null
tar -C dist --exclude='*.ncu-rep' --exclude='raw.csv' --exclude='bin' -cJf $OUT/logs_s15b.tar.xz logs15
echo "done, left $(left)s"
