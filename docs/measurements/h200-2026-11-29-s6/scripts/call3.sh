#!/bin/bash
# Session 6 call 3: u14_stream_sp with the residual applied inside the main loop, batch by batch (v3), and
# CTAS_PER_SM / UNROLL variants, vs call 2's v2_c2, pair_mask_tc and csr_packed_rows; finalists: v3_c2 on
# f_u90_fp16_big, v3 on f_u95_fp16_odd.
set -u
cd /work/main
R=/tmp/r3; mkdir -p $R
trap 'tar czf $OUT/r3.tgz -C /tmp r3' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s6/v; TK=.device/s6/tasks.yaml
KS=""; for k in v3 v3_c2 v3_c2_u6 v3_u6 v2_c2; do KS="$KS --kernel $V/$k.cu"; done
KS="$KS --kernel kernels/seeds/pair_mask_tc.cu --kernel kernels/seeds/csr_packed_rows.cu"
for t in u90_4096 u90_4096x11008 u90_11008x4096 u90_8192 u80_4096x11008 u90_4096_bf16; do
  timeout 120 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c3 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for tk in f_u90_fp16_big:v3_c2 f_u95_fp16_odd:v3; do
  t=${tk%%:*}; k=${tk##*:}
  timeout 150 $SD eval --task $TK --name $t --kernel $V/$k.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf > $R/fin_${t}_$k.txt 2>&1
  echo "fin $t $k rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/u*.txt $R/nm*.txt; do echo "## $f"; grep -E '^candidate|verdict|^ +[0-9]+ +[0-9.]+ |correctness|rror|detail' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (v[23]|pair_mask|csr_packed)/\n  \1/g'; done
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|sanitizer|racecheck|memcheck|initcheck|determin|correctness|exited|stage' $f | head -30; done
