#!/bin/bash
# Session 5 call 8: GPU tests after smoke problems gained the task's largest n (capped at 1024); finalist checks
# (determinism, memcheck, racecheck, initcheck) whose smoke problems now reach the large-n paths: bsr_mma
# (block 64, two-stage big tile), nm24_mma_sp and nm24_stream_sp (2:4), pair_mask_tc (u90); bench of the llm
# block rows (fp16) with bsr_mma's new defaults.
set -u
cd /work/main
R=/tmp/r8; mkdir -p $R
trap 'tar czf $OUT/r8.tgz -C /tmp r8' EXIT
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
timeout 300 scripts/device_run.sh .device/dist .device/data /work/main $R/gpu_tests > $R/gpu_tests.txt 2>&1
echo "gpu tests rc $? at $(el)s" >> $R/timeline.txt
cd /work/main
SD=$PWD/.device/dist/bin/sparseditto
fin() { timeout 150 $SD eval --task .device/s5/fin.yaml --name $1 --kernel kernels/seeds/$2.cu --finalist --timing-seconds 0.1 --stage-timeout 140 --cache /tmp/cf_$1_$2 > $R/fin_$1_$2.txt 2>&1; echo "fin $1 $2 rc $? at $(el)s" >> $R/timeline.txt; }
fin f_b64_fp16_big bsr_mma & fin f_nm24_fp16_big nm24_mma_sp & wait
fin f_nm24_fp16_big nm24_stream_sp & fin f_u90_fp16_big pair_mask_tc & wait
timeout 240 $SD bench --suite configs/suites/llm.yaml --name '^llm_block.*_fp16$' --seeds kernels/seeds --out $R/bench_block --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30 > $R/bench_block.log 2>&1
echo "bench rc $? at $(el)s" >> $R/timeline.txt
cat $R/timeline.txt; grep -E "^===|PASSED|FAILED|corpus|H200" $R/gpu_tests.txt
grep -h -E '^candidate|verdict|sanitizer|correctness|^ +[0-9]+ +[0-9.]+ ' $R/fin_*.txt | head -40
cat $R/bench_block/bench.txt 2>/dev/null || tail -20 $R/bench_block.log
