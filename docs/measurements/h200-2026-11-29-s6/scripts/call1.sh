#!/bin/bash
# Session 6 call 1: u14_stream_sp (branch wip/u14-stream-sp, c01668e) and four tunable variants vs pair_mask_tc and
# csr_packed_rows on u90 n=16 (four llm shapes), u70, bf16; then finalist checks of u14 on three small tasks.
set -u
cd /work/main
R=/tmp/r1; mkdir -p $R
trap 'tar czf $OUT/r1.tgz -C /tmp r1' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s6/v; TK=.device/s6/tasks.yaml
KS=""; for k in u14 u14_u6 u14_c2 u14_w4 u14_u2; do KS="$KS --kernel $V/$k.cu"; done
KS="$KS --kernel kernels/seeds/pair_mask_tc.cu --kernel kernels/seeds/csr_packed_rows.cu"
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u70_4096x11008 u90_4096_bf16; do
  timeout 120 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for t in f_u90_fp16_big f_u90_bf16 f_u95_fp16_odd; do
  timeout 150 $SD eval --task $TK --name $t --kernel $V/u14.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf > $R/fin_$t.txt 2>&1
  echo "fin $t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/u*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |correctness|rror|detail' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (u14|pair_mask|csr_packed)/\n  \1/g'; done
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|sanitizer|racecheck|memcheck|initcheck|determin|correctness|exited|stage' $f | head -14; done
