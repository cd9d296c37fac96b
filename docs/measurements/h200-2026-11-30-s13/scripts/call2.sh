#!/bin/bash
# Session 13 call 2: dense_cublaslt's bf16 finalist check (call 1's ran out of time there), ncu of the
# kernels behind the near misses (call3.sh's list plus pair_mask_tc at u50 n16), then the llm u50 (fp16,
# bf16) and u90 fp16 rows with dense_cublaslt in the library (bench --resume). Carry .device/dist,
# .device/data.tgz, .device/s13.
set -u
cd "$(dirname "$0")/../.."
R=/tmp/r2; mkdir -p $R; [ -d .device/data ] || tar xzf .device/data.tgz -C .device
trap 'tar czf $OUT/r2.tgz -C /tmp r2' EXIT
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto; $SD --version; T=.device/s13/ncu_tasks.yaml; K=kernels/seeds
timeout 100 $SD eval --task configs/suites/seed_finalists.yaml --name fin_block64_80_bf16 --kernel $K/dense_cublaslt.cu --finalist --timing-seconds 0.05 --min-trials 5 --cache /tmp/cf > $R/fin_cublaslt_bf16.txt 2>&1
echo "fin rc $? at $(el) s"; grep -E "verdict|checks|sanitizer" $R/fin_cublaslt_bf16.txt
prof() {  # prof NAME TASKFILE TASK KERNEL REGEX
  timeout 70 scripts/ncu_profile.sh $SD $2 $3 $4 $5 $R/$1 > $R/$1.log 2>&1
  echo "== $1 rc $? at $(el) s: $(tail -1 $R/$1.log)"
  grep -E "Duration|Grid Size|Registers Per|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Waves Per SM" $R/$1/details.txt 2>/dev/null | head -9
}
prof stream_sp_n16 $T nm24_4096_n16 $K/nm24_stream_sp.cu Nm24StreamKernel
prof wgmma_sp_n128 $T nm24_4096_n128 $K/nm24_wgmma_sp.cu Nm24WgmmaSpKernel
prof u14_n16 $T u90_4096_n16 $K/u14_stream_sp.cu U14StreamKernel
prof pair_mask_u50_n16 $T u50_4096_n16 $K/pair_mask_tc.cu PairMask
prof bsr_wgmma_n2048 configs/suites/llm.yaml llm_block64_90_4096x4096_fp16 $K/bsr_wgmma.cu BsrWgmma
[ -d .device/s13/llm_out ] && cp -r .device/s13/llm_out $R/llm
timeout $((570 - $(el))) $SD bench --suite configs/suites/llm.yaml --name 'unstructured50_.*|unstructured90_.*_fp16' --seeds kernels/seeds --resume --out $R/llm --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 --cache /tmp/cl > $R/llm_stdout.txt 2>&1
echo "llm rc $? at $(el) s"; cut -c1-200 $R/llm/bench.txt
