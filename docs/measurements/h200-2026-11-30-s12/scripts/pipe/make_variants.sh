#!/bin/bash
# Regenerates this folder's candidate files from the branch's seed (run from anywhere).
set -eu
D=$(cd "$(dirname "$0")" && pwd); WT=$(cd "$D/../../.." && pwd); F=$WT/kernels/seeds/nm24_wgmma_sp.cu; V=$D/variant.sh
git -C "$WT" show 3cbb129:kernels/seeds/nm24_wgmma_sp.cu > $D/base_main.cu   # main's seed
$V $F $D/v_head.cu
$V $F $D/v_ws.cu WS=1
$V $F $D/v_split.cu SPLIT_MAX=8 MID_N_MAX=128
$V $F $D/v_ws_split.cu WS=1 SPLIT_MAX=8 MID_N_MAX=128
$V $F $D/v_ws_bn128.cu WS=1 BN=128 STAGES=4 SPLIT_MAX=8
$V $F $D/v_ws_bn128s3.cu WS=1 BN=128 STAGES=3 SPLIT_MAX=8
$V $F $D/v_ws_s5.cu WS=1 STAGES=5 SPLIT_MAX=8 MID_N_MAX=128
$V $F $D/v_ws_inflight.cu WS=1 MMA_INFLIGHT=1 SPLIT_MAX=8 MID_N_MAX=128
