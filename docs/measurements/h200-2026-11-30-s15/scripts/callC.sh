#!/bin/bash
# Session 15 call C (nvidia-h200, one GPU alone). Calls A and B ran on the two-GPU machine, two benches at once,
# and timed every short kernel slower than sessions 13-14 did on this one (dlmc rows 1.20x, llm n 16 1.07x,
# baselines too). Here, alone: the clocks, the dlmc suite, then the llm fp16 tasks the targets name.
R=/tmp/rC; mkdir -p $R; trap 'tar czf $OUT/rC.tgz -C /tmp rC' EXIT
source "$(dirname "$0")/pre.sh"
cat .device/dist/BUILT_FROM
nvidia-smi -q -d CLOCK,PERFORMANCE,POWER > $R/clocks.txt 2>&1; grep -A3 -E "^ +Clocks$|Max Clocks|Power Limit" $R/clocks.txt | head -24
bench_part 0 configs/suites/dlmc.yaml '.*' dlmc_x1 390
bench_part 0 configs/suites/llm.yaml '(nm24|unstructured50|unstructured90|block64_90)_.*_fp16$' llm_targets_x1 $((585 - $(el)))
