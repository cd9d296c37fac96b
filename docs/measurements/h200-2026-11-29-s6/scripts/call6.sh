#!/bin/bash
# Session 6 call 6: u14_stream_sp with the seconds skipped when no record carries one (any_seconds) on 1:4 and
# u90; finalists of it on a 1:4 task and f_u95_fp16_odd; scripts/ncu_profile.sh on it at u90 4096x11008 n=16.
set -u
cd /work/main
R=/tmp/r6; mkdir -p $R
trap 'tar czf $OUT/r6.tgz -C /tmp r6' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s6/v; TK=.device/s6/tasks.yaml
KS="--kernel kernels/seeds/u14_stream_sp.cu --kernel $V/v4_c2.cu --kernel kernels/seeds/pair_mask_tc.cu"
for t in nm14_4096 nm14_4096x11008 u90_4096x11008 u90_11008x4096; do
  timeout 100 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c6 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 170 $SD eval --task $TK --name f_nm14_fp16 --kernel kernels/seeds/u14_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf > $R/fin_f_nm14_fp16.txt 2>&1
echo "fin nm14 rc $? at $(el)s" >> $R/timeline.txt
timeout 170 $SD eval --task $TK --name f_u95_fp16_odd --kernel kernels/seeds/u14_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf > $R/fin_f_u95_fp16_odd.txt 2>&1
echo "fin u95 rc $? at $(el)s" >> $R/timeline.txt
timeout 200 scripts/ncu_profile.sh $SD $TK u90_4096x11008 kernels/seeds/u14_stream_sp.cu U14StreamKernel $R/ncu_u14_u90_4096x11008 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el)s" >> $R/timeline.txt
rm -f $R/ncu_u14_u90_4096x11008/full.ncu-rep
cat $R/timeline.txt $R/ncu.log
for f in $R/u*.txt $R/nm*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |correctness|rror|detail' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (u14|v4|pair_mask)/\n  \1/g'; done
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|sanitizer|exited|correctness' $f | head -10; done
grep -E "Duration|DRAM Throughput|Memory Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Executed Ipc A|Grid Size|Block Size|No Eligible|Warp Cycles Per Issued" $R/ncu_u14_u90_4096x11008/details.txt | head -20
