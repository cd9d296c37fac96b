#!/bin/bash
# Session 6 call 7: the B slab in SLAB_PARTS cp.async groups (compute starts when the first part lands) in
# nm24_stream_sp and u14_stream_sp, parts 4 and 2, vs the committed seeds (77ca830); finalists of parts 4.
set -u
cd /work/main
R=/tmp/r7; mkdir -p $R
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s6/v; TK=.device/s6/tasks.yaml
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192; do
  timeout 40 $SD eval --task $TK --name $t --kernel $V/u14_head.cu --kernel $V/u14_p4.cu --kernel $V/u14_p2.cu --timing-seconds 0.2 --stage-timeout 30 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in nm24_4096 nm24_4096x11008 nm24_11008x4096 nm24_8192; do
  timeout 40 $SD eval --task .device/s5/tasks.yaml --name $t --kernel $V/nm24_head.cu --kernel $V/nm24_p4.cu --kernel $V/nm24_p2.cu --timing-seconds 0.2 --stage-timeout 30 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 70 $SD eval --task $TK --name f_u95_fp16_odd --kernel kernels/seeds/u14_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 65 --cache /tmp/cf > $R/fin_u14_f_u95_fp16_odd.txt 2>&1
echo "fin u14 rc $? at $(el)s" >> $R/timeline.txt
timeout 70 $SD eval --task .device/s3/tasks5.yaml --name f_nm24_fp16 --kernel kernels/seeds/nm24_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 65 --cache /tmp/cf > $R/fin_nm24_f_nm24_fp16.txt 2>&1
echo "fin nm24 rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
for f in $R/u*.txt $R/nm*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/cusparselt.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //; s/verdict: //; s/\(stage reached: DONE\)//' | paste -sd' ' | sed -E 's/ (u14_|nm24_)/\n  \1/g'; done
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness' $f | head -8; done
