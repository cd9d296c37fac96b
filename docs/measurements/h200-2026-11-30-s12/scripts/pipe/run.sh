#!/bin/bash
# Session 12, pipe: nm24_wgmma_sp from wip/nm24-wgmma-sp-pipe (the seed with WS / SPLIT_MAX / MID_N_MAX /
# MMA_INFLIGHT tunables) against main's seed (base_main.cu = kernels/seeds/nm24_wgmma_sp.cu at 3cbb129).
# Carry .device/dist and .device/s12 (this folder is git-ignored). About 300 s of GPU time; each step is
# time-boxed (the boxes sum to 540 s, under the 600 s a call) and prints its elapsed time, the most valuable comparisons first. Compiles are cached by
# content in /tmp/cpipe (one compile per file for all steps).
# Files (variant.sh from the branch's seed; v_head = the branch's defaults = main's behaviour):
#   base_main      main's seed                         v_head        branch defaults (refactor check)
#   v_ws           WS=1                                v_split       SPLIT_MAX=8 MID_N_MAX=128
#   v_ws_split     WS=1 SPLIT_MAX=8 MID_N_MAX=128      v_ws_bn128    WS=1 BN=128 STAGES=4 SPLIT_MAX=8 (2 CTAs/SM)
#   v_ws_s5        WS=1 STAGES=5 SPLIT_MAX=8 MID=128   v_ws_inflight WS=1 MMA_INFLIGHT=1 SPLIT_MAX=8 MID=128 (ptxas C7513)
set -u
cd "$(dirname "$0")/../../.."
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
R=/tmp/rpipe; mkdir -p $R; OUT=${OUT:-/tmp/out}; mkdir -p $OUT
trap 'tar czf $OUT/rpipe.tgz -C /tmp rpipe' EXIT
SD=${SD:-$PWD/.device/dist/bin/sparseditto}; P=.device/s12/pipe; TASKS=$P/tasks.yaml
nvidia-smi --query-gpu=name,driver_version,memory.used --format=csv > $R/gpu.txt 2>&1
k() { for f in "$@"; do printf -- "--kernel $P/%s.cu " $f; done; }
ALL=$(k base_main v_ws v_split v_ws_split v_ws_bn128 v_ws_s5 v_ws_inflight v_head)
TOP=$(k base_main v_ws v_ws_split v_ws_bn128 v_split)
ev() {  # ev LIMIT_S TASK KERNELS... [extra flags]
  local lim=$1 t=$2; shift 2
  timeout $lim $SD eval --task $TASKS --name $t "$@" --timing-seconds 0.1 --stage-timeout 30 --cache /tmp/cpipe > $R/$t.txt 2>&1
  echo "$t rc $? at $(el) s" | tee -a $R/steps.txt
}
# 1. Correctness on awkward shapes, every variant (n 1, 7, 8, 40, 130, 300: thread copy and copy engine, split-K).
ev 90 awkward_7x96_fp16 $ALL
ev 45 awkward_300x520_fp16 $ALL
# 2. The numbers this work is for: 4096² at n 128 (split-K) and 2048 (producer warp), every variant.
ev 60 nm24_4096x4096_fp16 $ALL
# 3. Sanitizers (memcheck, racecheck, initcheck) on the most complex variant: WS + cluster split-K, 7x96.
timeout 120 $SD eval --task $TASKS --name awkward_7x96_fp16 --kernel $P/v_ws_split.cu --finalist --timing-seconds 0.1 --stage-timeout 60 --cache /tmp/cpipe > $R/finalist_v_ws_split.txt 2>&1
echo "finalist v_ws_split rc $? at $(el) s" | tee -a $R/steps.txt
# 4. The other llm shapes, the leading variants.
for t in nm24_4096x11008_fp16 nm24_11008x4096_fp16 nm24_8192x8192_fp16; do ev 45 $t $TOP; done
# 5. If time is left: more awkward shapes and bf16.
ev 30 awkward_1000x1500_fp16 $TOP
ev 30 awkward_300x520_bf16 $TOP
ev 30 nm24_4096x4096_bf16 $TOP
for f in $R/*.txt; do
  case $f in */steps.txt|*/gpu.txt) continue;; esac
  echo "## $(basename $f .txt)"
  grep -E "^candidate|verdict|detail|correctness|sanitiz|memcheck|racecheck|initcheck|^ +[0-9]+ +[0-9.]+ " $f | sed -E 's/cusparse_csr [0-9.]+ \([0-9.]+x\) *//' | cut -c1-200
done
cat $R/steps.txt
