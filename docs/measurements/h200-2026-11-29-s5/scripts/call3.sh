#!/bin/bash
# Session 5 call 3: pair_mask_tc with the split-K sum over a thread-block cluster (pmc*) vs the committed seed
# (pm_base) on the unstructured tasks; finalist checks of nm24_stream_sp as committed (595b1b4); bench of the
# llm 2:4 rows with every seed.
set -u
cd /work/main
R=/tmp/r3; mkdir -p $R
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s5/v
KS=""; for k in pm_base pmc16 pmc16s96 pmc32s96 pmc8; do KS="$KS --kernel $V/$k.cu"; done
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u50_4096 u70_4096; do
  timeout 110 $SD eval --task .device/s3/tasks2.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c3 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
timeout 170 $SD eval --task .device/s3/tasks5.yaml --name f_nm24_fp16 --kernel kernels/seeds/nm24_stream_sp.cu --finalist --timing-seconds 0.1 --stage-timeout 160 --cache /tmp/cf > $R/fin_f_nm24_fp16_nm24_stream_sp.txt 2>&1
echo "fin rc $? at $(el)s" >> $R/timeline.txt
timeout 200 $SD bench --suite configs/suites/llm.yaml --name '^llm_nm24_' --seeds kernels/seeds --out $R/bench_nm24 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench_nm24.log 2>&1
echo "bench rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt
grep -h -E '^candidate|verdict|sanitizer|racecheck|memcheck|initcheck|determin|correctness' $R/fin_*.txt | head -12
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (pm_base|pmc)/\n  \1/g'; done
cat $R/bench_nm24/bench.txt 2>/dev/null | head -40 || tail -20 $R/bench_nm24.log
