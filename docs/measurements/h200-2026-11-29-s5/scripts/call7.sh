#!/bin/bash
# Session 5 call 7: bsr_mma with two stages and/or 8 warps at every n of the llm suite (block 64 @ 90% 4096x11008,
# block 32 @ 80% 4096^2, block 64 @ 80% 8192^2) before changing its defaults.
set -u
cd /work/main
R=/tmp/r7; mkdir -p $R
trap 'tar czf $OUT/r7.tgz -C /tmp r7' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; V=.device/s5/v
KS=""; for k in bsr_base bsr_st2 bsr_st2w8 bsr_w8; do KS="$KS --kernel $V/$k.cu"; done
for t in b64_90_all_n b32_80_all_n b64_80_all_n; do
  timeout 150 $SD eval --task .device/s5/tasks.yaml --name $t $KS --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c7 > $R/$t.txt 2>&1
  echo "$t rc $? at $(el)s" >> $R/timeline.txt
done
cat $R/timeline.txt
for f in $R/b*.txt; do echo "## $f"; grep -E '^candidate|^ +[0-9]+ +[0-9.]+ |correctness|rror' $f | sed -E 's/cusparse_csr.*//; s/candidate (\S+)-\S+ .*/\1/; s/, max abs.*//; s/correctness: //' | paste -sd' ' | sed -E 's/ (bsr_)/\n  \1/g'; done
