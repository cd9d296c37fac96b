#!/bin/bash
# Session 4 call 1: per-kernel times of bitmap_tc variants and csr_packed_rows (64-register variant) on the
# unstructured targets; ncu (stalls, pipes, memory) of bitmap_tc at n=16.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s4/v; T=.device/s3/tasks2.yaml
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt
KS=""; for k in bt_def bt_m4k2 bt_m4k1_n16 bt_m2k4_n16 bt_s4 cpr_def cpr_64; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u50_4096 u70_4096 u90_4096x11008; do
  timeout 150 $SD eval --task $T --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
P=$R/prof; mkdir -p $P /tmp/ncu/bin
ln -sfn $PWD/.device/dist/lib /tmp/ncu/lib; ln -sfn $PWD/.device/dist/share /tmp/ncu/share
cp .device/dist/bin/sparseditto-runner /tmp/ncu/bin/sparseditto-runner.real
M=gpu__time_duration.sum,launch__grid_size
prof() { local task=$1 k=$2 kre=$3
  printf '#!/bin/bash\nsetsid /usr/local/cuda/bin/ncu --clock-control none -k regex:%s --launch-count 40 --metrics %s --csv --log-file %s/%s_%s_light.csv /tmp/ncu/bin/sparseditto-runner.real "$@" &\nwait $!\n' "$kre" "$M" "$P" "$task" "$k" > /tmp/ncu/bin/wrap.sh
  chmod +x /tmp/ncu/bin/wrap.sh
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 60 $SD eval --task .device/s3/ncu.yaml --name $task --kernel kernels/seeds/$k.cu --timing-seconds 0.02 --min-trials 2 --stage-timeout 50 --cache /tmp/cache_$task > $P/${task}_${k}.eval.txt 2>&1
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
  printf '#!/bin/bash\nsetsid /usr/local/cuda/bin/ncu --clock-control none -k regex:%s --launch-skip %s --launch-count 1 --section WarpStateStats --section SpeedOfLight --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis -o %s/%s_%s_full /tmp/ncu/bin/sparseditto-runner.real "$@" &\nwait $!\n' "$kre" "$skip" "$P" "$task" "$k" > /tmp/ncu/bin/wrap.sh
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 90 $SD eval --task .device/s3/ncu.yaml --name $task --kernel kernels/seeds/$k.cu --timing-seconds 0.02 --min-trials 2 --stage-timeout 80 --cache /tmp/cache_$task > $P/${task}_${k}.eval2.txt 2>&1
  sleep 1
  ncu --import $P/${task}_${k}_full.ncu-rep --page raw --csv > $P/${task}_${k}_raw.csv 2>&1
  ncu --import $P/${task}_${k}_full.ncu-rep --page details > $P/${task}_${k}_details.txt 2>&1
  rm -f $P/${task}_${k}_full.ncu-rep
  echo "prof $task $k done at $(el)s" >> $R/timeline.txt
}
prof p_u50_n16 bitmap_tc BitmapSpmm
prof p_u90_n16 bitmap_tc BitmapSpmm
cat $R/timeline.txt
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ ' $f | sed 's/(NVIDIA H200, sm_90)//; s/on task.*//'; done
for f in $P/*_details.txt; do echo "## $f"; grep -E 'Duration|Throughput|Registers|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Block Limit|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Grid Size' $f | head -30; done
