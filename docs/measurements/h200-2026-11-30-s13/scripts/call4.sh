#!/bin/bash
# Session 13 call 4: nm24_wgmma_sp with K splits whose clusters are all resident (3653943) against session
# 12's (variants/nm24_wgmma_sp_s12.cu) on the llm 2:4 rows; its finalist checks (fin_nm24_fp16, sanitizers);
# ncu of the new one at 4096^2 n 128. Carry .device/dist, .device/data.tgz, .device/s13.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r4; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r4.tgz -C /tmp r4' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; $SD --version; git log --oneline -1 2>/dev/null; K=kernels/seeds; V=.device/s13/variants
for t in 4096x4096_fp16 4096x11008_fp16 11008x4096_fp16 8192x8192_fp16 4096x4096_bf16; do
  timeout 150 $SD eval --task configs/suites/llm.yaml --name llm_nm24_$t --kernel $K/nm24_wgmma_sp.cu --kernel $V/nm24_wgmma_sp_s12.cu --timing-seconds 0.2 --stage-timeout 60 --cache /tmp/c4 > $R/nm24_$t.txt 2>&1
  echo "nm24 $t rc $? at $(el) s"; grep -E "^candidate|verdict|^ +[0-9]+ +[0-9.]+ " $R/nm24_$t.txt | sed -E 's/ on task .*//; s/cusparse_csr [0-9.]+ \([0-9.]+x\) *//' | cut -c1-140 | paste - - - - - | sed -E 's/ +/ /g'
done
timeout 150 $SD eval --task configs/suites/seed_finalists.yaml --name fin_nm24_fp16 --kernel $K/nm24_wgmma_sp.cu --finalist --timing-seconds 0.05 --min-trials 5 --cache /tmp/c4 > $R/fin_nm24_fp16.txt 2>&1
echo "fin rc $? at $(el) s"; grep -E "verdict|checks|sanitizer" $R/fin_nm24_fp16.txt
timeout 80 scripts/ncu_profile.sh $SD .device/s13/ncu_tasks.yaml nm24_4096_n128 $K/nm24_wgmma_sp.cu Nm24WgmmaSpKernel $R/ncu_n128 > $R/ncu.log 2>&1
echo "ncu rc $? at $(el) s: $(tail -1 $R/ncu.log)"
grep -E "^  [a-z].*\(|Elapsed Cycles|SM Active Cycles|Duration|DRAM Throughput|Max Active Clusters|Cluster Size|Grid Size" $R/ncu_n128/details.txt | cut -c1-200 | sed -E 's/ +/ /g'
