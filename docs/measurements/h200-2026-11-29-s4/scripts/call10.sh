#!/bin/bash
# Session 4 call 10: finalist checks of csr_packed_rows with its new defaults (43a133f); the llm unstructured
# bf16 rows with the current seeds.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r10; mkdir -p $R
trap 'tar czf $OUT/r10.tgz -C /tmp r10' EXIT
mkdir -p /work/shared && ln -sfn "$PWD" /work/main 2>/dev/null; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; T=.device/s3/tasks5.yaml
fin() { timeout 150 $SD eval --task $T --name $1 --kernel kernels/seeds/$2.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf_$1_$2 > $R/fin_$1_$2.txt 2>&1; echo "fin $1 $2 rc $? at $(el)s" >> $R/timeline.txt; }
fin f_u90_bf16 csr_packed_rows &
fin f_u90_fp32 csr_packed_rows &
wait
timeout $((400 - $(el))) $SD bench --suite configs/suites/llm.yaml --name '^llm_unstructured.*_bf16$' --seeds kernels/seeds --out $R/llm_u_bf16 --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/cb > $R/llm_stdout.txt 2>&1
echo "llm u bf16 rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt; grep -h -E '^candidate|verdict|sanitizer|correctness' $R/fin_*.txt; cut -c1-75,150-200 $R/llm_u_bf16/bench.txt | grep -E " 16 |geomean"
