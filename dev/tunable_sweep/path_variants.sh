#!/usr/bin/env bash
# Writes into DIR the three stream seeds as they stand plus one variant of each with every path that is off by
# default turned on (u14_stream_sp_allpaths: SPREAD_RESIDUAL, RESIDUAL_FIRST, BALANCE_ROWS, STAGE_A, PRMT_EXPAND;
# u24_stream_sp_allpaths: the first three and THIRDS 24; nm24_stream_sp_staged: STAGE_A), named by
# file stem as the seed library names seeds, so that `SEEDS_DIR=DIR scripts/seed_finalists.sh` puts the code the
# search can switch on through the sanitizers too, not only the defaults.
#   dev/tunable_sweep/path_variants.sh DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd); dir="$1"; s="$root/kernels/seeds"
mkdir -p "$dir" && cp "$s"/{nm24_stream_sp,u14_stream_sp,u24_stream_sp}.cu "$dir/"
sed -E 's/^#define (SPREAD_RESIDUAL|RESIDUAL_FIRST|BALANCE_ROWS|STAGE_A|PRMT_EXPAND) 0 /#define \1 1 /' "$s/u14_stream_sp.cu" > "$dir/u14_stream_sp_allpaths.cu"
sed -E 's/^#define (SPREAD_RESIDUAL|RESIDUAL_FIRST|BALANCE_ROWS) 0 /#define \1 1 /; s/^#define THIRDS [0-9]+ /#define THIRDS 24 /' "$s/u24_stream_sp.cu" > "$dir/u24_stream_sp_allpaths.cu"
sed -E 's/^#define STAGE_A 0 /#define STAGE_A 1 /' "$s/nm24_stream_sp.cu" > "$dir/nm24_stream_sp_staged.cu"
[[ $(grep -cE "^#define (SPREAD_RESIDUAL|RESIDUAL_FIRST|BALANCE_ROWS|STAGE_A|PRMT_EXPAND) 1 " "$dir/u14_stream_sp_allpaths.cu") == 5 &&
   $(grep -cE "^#define (SPREAD_RESIDUAL|RESIDUAL_FIRST|BALANCE_ROWS) 1 |^#define THIRDS 24 " "$dir/u24_stream_sp_allpaths.cu") == 4 &&
   $(grep -cE "^#define STAGE_A 1 " "$dir/nm24_stream_sp_staged.cu") == 1 ]] || { echo "path_variants: a #define moved; fix the patterns" >&2; exit 1; }
