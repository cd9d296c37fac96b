#!/bin/bash
# Session 8 call B: bsr_wgmma with kStages-1 blocks in flight (la*) against main's (old), block 64;
# finalists of the staged-C bsr_mma and of la3 (TMA and cp.async paths).
set -u
cd /work/main
R=/tmp/r2; mkdir -p $R
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s8/v2; TK=.device/s8/btasks.yaml
KS=""; for k in old la3 la2 la4 la3w3 la2s2 la3s3; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_4096 b64_4096x11008 b64_8192 b64_11008x4096 b64_90_all_n b64_80_all_n; do
  [ $(el) -lt 300 ] || break
  timeout 120 $SD eval --task $TK --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c1 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
for tk in f_b64_fp16_odd:$V/la3 f_b64_fp16_tma:$V/la3 f_b32_fp16_odd:.device/s8/v/mma_staged f_b64_bf16_big:.device/s8/v/mma_staged f_b64_fp16_tma:$V/la2; do
  [ $(el) -lt 480 ] || break
  t=${tk%%:*}; k=${tk##*:}
  timeout 90 $SD eval --task $TK --name $t --kernel $k.cu --finalist --timing-seconds 0.1 --stage-timeout 80 --cache /tmp/cf > $R/fin_${t}_$(basename $k).txt 2>&1
  echo "fin $t $k rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
.device/s7/summ.sh $R/b*.txt
for f in $R/fin_*.txt; do echo "## $f"; grep -E 'verdict|detail|exited|correctness|rror' $f | head -8; done
