#!/bin/bash
# Session 5 call 4: GPU tests after the stream-gate cleanup (one timeout constant; Open and a stream sync on
# the error paths); L2 and DRAM read bandwidth probe; finalist checks of nm24_stream_sp in bf16; ncu of
# nm24_stream_sp (2:4, n=16) and bsr_mma (block 64 at 90%, n=2048) at 4096^2.
set -u
cd /work/main
R=/tmp/r4; mkdir -p $R
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu_tests > $R/gpu_tests.txt 2>&1
echo "gpu tests rc $? at $(el)s" >> $R/timeline.txt
cd /work/main
SD=$PWD/.device/dist/bin/sparseditto
nvcc -O3 -arch=sm_90 -o /tmp/l2bw .device/s5/probe/l2_bandwidth.cu && /tmp/l2bw > $R/l2_bandwidth.txt 2>&1
echo "probe rc $? at $(el)s" >> $R/timeline.txt
timeout 170 $SD eval --task .device/s5/fin.yaml --name f_nm24_bf16 --kernel kernels/seeds/nm24_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 160 --cache /tmp/cf > $R/fin_f_nm24_bf16_nm24_stream_sp.txt 2>&1
echo "fin rc $? at $(el)s" >> $R/timeline.txt
P=$R/prof; mkdir -p $P /tmp/ncu/bin
ln -sfn $PWD/.device/dist/lib /tmp/ncu/lib; ln -sfn $PWD/.device/dist/share /tmp/ncu/share
cp .device/dist/bin/sparseditto-runner /tmp/ncu/bin/sparseditto-runner.real
M=gpu__time_duration.sum,launch__grid_size
prof() { local task=$1 k=$2 kre=$3 kp=$4
  printf '#!/bin/bash\nsetsid /usr/local/cuda/bin/ncu --clock-control none -k regex:%s --launch-count 40 --metrics %s --csv --log-file %s/%s_%s_light.csv /tmp/ncu/bin/sparseditto-runner.real "$@" &\nwait $!\n' "$kre" "$M" "$P" "$task" "$k" > /tmp/ncu/bin/wrap.sh
  chmod +x /tmp/ncu/bin/wrap.sh
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 60 $SD eval --task .device/s3/ncu.yaml --name $task --kernel $kp --timing-seconds 0.02 --min-trials 2 --stage-timeout 50 --cache /tmp/cache_$task > $P/${task}_${k}.eval.txt 2>&1
  sleep 1
  local skip=$(python3 - "$P/${task}_${k}_light.csv" <<'PY'
import csv,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
h=rows[0]; gi=h.index("Grid Size"); ii=h.index("ID")
best=-1; idx=0; seen=[]
for r in rows[1:]:
    if r[ii] in seen: continue
    seen.append(r[ii]); g=1
    for x in r[gi].strip("()").split(","): g*=int(x)
    if g>best: best=g; idx=len(seen)-1
print(idx)
PY
)
  echo "$task $k skip=$skip at $(el)s" >> $R/timeline.txt
  printf '#!/bin/bash\nsetsid /usr/local/cuda/bin/ncu --clock-control none -k regex:%s --launch-skip %s --launch-count 1 --section WarpStateStats --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis --section SourceCounters -o %s/%s_%s_full /tmp/ncu/bin/sparseditto-runner.real "$@" &\nwait $!\n' "$kre" "$skip" "$P" "$task" "$k" > /tmp/ncu/bin/wrap.sh
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 90 $SD eval --task .device/s3/ncu.yaml --name $task --kernel $kp --timing-seconds 0.02 --min-trials 2 --stage-timeout 80 --cache /tmp/cache_$task > $P/${task}_${k}.eval2.txt 2>&1
  sleep 1
  ncu --import $P/${task}_${k}_full.ncu-rep --page raw --csv > $P/${task}_${k}_raw.csv 2>&1
  ncu --import $P/${task}_${k}_full.ncu-rep --page details > $P/${task}_${k}_details.txt 2>&1
  rm -f $P/${task}_${k}_full.ncu-rep
  echo "prof $task $k done at $(el)s" >> $R/timeline.txt
}
prof p_nm24_n16 nm24_stream_sp Nm24StreamKernel kernels/seeds/nm24_stream_sp.cu
prof p_block64_90_n2048 bsr_mma BsrMmaKernel kernels/seeds/bsr_mma.cu
cat $R/timeline.txt $R/l2_bandwidth.txt; grep -E "^===|PASSED|FAILED|corpus|H200" $R/gpu_tests.txt
grep -h -E '^candidate|verdict|sanitizer|racecheck|memcheck|initcheck|determin|correctness' $R/fin_*.txt | head -12
for f in $P/*_details.txt; do echo "## $f"; grep -E 'Duration|Throughput|Registers|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Block Limit|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Grid Size' $f | head -30; done
