#!/bin/bash
# Session 4 call 3: ncu of pair_mask_tc (default) at n=16, u50 and u90 4096^2.
# unstructured targets; ncu (stalls, pipes, memory) of bitmap_tc at n=16.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r3; mkdir -p $R
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s4/v; T=.device/s3/tasks2.yaml
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $R/gpu.txt

P=$R/prof; mkdir -p $P /tmp/ncu/bin
ln -sfn $PWD/.device/dist/lib /tmp/ncu/lib; ln -sfn $PWD/.device/dist/share /tmp/ncu/share
cp .device/dist/bin/sparseditto-runner /tmp/ncu/bin/sparseditto-runner.real
M=gpu__time_duration.sum,launch__grid_size
prof() { local task=$1 k=$2 kre=$3
  printf '#!/bin/bash\nsetsid /usr/local/cuda/bin/ncu --clock-control none -k regex:%s --launch-count 40 --metrics %s --csv --log-file %s/%s_%s_light.csv /tmp/ncu/bin/sparseditto-runner.real "$@" &\nwait $!\n' "$kre" "$M" "$P" "$task" "$k" > /tmp/ncu/bin/wrap.sh
  chmod +x /tmp/ncu/bin/wrap.sh
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 60 $SD eval --task .device/s3/ncu.yaml --name $task --kernel .device/s4/v/$k.cu --timing-seconds 0.02 --min-trials 2 --stage-timeout 50 --cache /tmp/cache_$task > $P/${task}_${k}.eval.txt 2>&1
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
  SPARSEDITTO_RUNNER=/tmp/ncu/bin/wrap.sh timeout 90 $SD eval --task .device/s3/ncu.yaml --name $task --kernel .device/s4/v/$k.cu --timing-seconds 0.02 --min-trials 2 --stage-timeout 80 --cache /tmp/cache_$task > $P/${task}_${k}.eval2.txt 2>&1
  sleep 1
  ncu --import $P/${task}_${k}_full.ncu-rep --page raw --csv > $P/${task}_${k}_raw.csv 2>&1
  ncu --import $P/${task}_${k}_full.ncu-rep --page details > $P/${task}_${k}_details.txt 2>&1
  rm -f $P/${task}_${k}_full.ncu-rep
  echo "prof $task $k done at $(el)s" >> $R/timeline.txt
}
prof p_u50_n16 pm_def PairMaskSpmm
prof p_u90_n16 pm_def PairMaskSpmm
cat $R/timeline.txt
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ ' $f | sed 's/(NVIDIA H200, sm_90)//; s/on task.*//'; done
for f in $P/*_details.txt; do echo "## $f"; grep -E 'Duration|Throughput|Registers|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|Block Limit|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Grid Size' $f | head -30; done
for f in $P/*_raw.csv; do echo "## $f"; python3 - "$f" <<'PY'
import csv,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>5]
h=rows[0]; vals=rows[2]
out=[(h[i],vals[i]) for i in range(len(h)) if 'issue_stalled' in h[i] and 'per_issue_active' in h[i]]
out.sort(key=lambda x:-float(x[1].replace(',','') or 0))
for k,v in out[:8]: print(k.replace('smsp__average_warp_latency_issue_stalled_','').replace('smsp__average_warps_issue_stalled_',''),v)
for i in range(len(h)):
  if ('inst_executed_pipe' in h[i] and 'avg.pct_of_peak_sustained_active' in h[i] and float(vals[i].replace(',','') or 0)>3) or h[i] in ('smsp__inst_executed.sum','sm__warps_active.avg.pct_of_peak_sustained_active','dram__bytes_read.sum'): print(h[i], vals[i])
PY
done
