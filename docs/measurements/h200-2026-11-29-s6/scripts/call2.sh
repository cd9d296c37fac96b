#!/bin/bash
# Session 6 call 2: u14_stream_sp with the residual staged per row pair in shared memory (v2) and CTAS_PER_SM / UNROLL variants vs pair_mask_tc, csr_packed_rows; 1:4 tasks (no residual) for the stream alone; finalists of v2; GPU tests after the timing.cc fold.
set -u
cd /work/main
R=/tmp/r2; mkdir -p $R
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s6/v; TK=.device/s6/tasks.yaml
KS=""; for k in v2 v2_c2 v2_c3 v2_u2; do KS="$KS --kernel $V/$k.cu"; done
KS="$KS --kernel kernels/seeds/pair_mask_tc.cu --kernel kernels/seeds/csr_packed_rows.cu"
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u80_4096x11008 u90_4096_bf16 nm14_4096 nm14_4096x11008; do
  timeout 120 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c2 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_u90_fp16_big f_u95_fp16_odd; do
  timeout 150 $SD eval --task $TK --name $t --kernel $V/v2.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/u*.txt $R/nm*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |correctness|rror|detail' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (v2|pair_mask|csr_packed)/\n  \1/g'; done
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|sanitizer|racecheck|memcheck|initcheck|determin|correctness|exited|stage' $f | head -14; done
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu_tests > $R/gpu_tests.txt 2>&1; echo "gpu tests rc $? at $(el)s" >> $R/timeline.txt
cat $R/gpu_tests.txt | tail -20
