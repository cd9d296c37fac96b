# Shared preamble of session 15's calls (sourced). Carry .device/dist, .device/data.tgz, .device/s15.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
[ -d .device/data ] || tar xzf .device/data.tgz -C .device
mkdir -p /work/shared && ln -sfn "$PWD/.device/data" /work/shared/data; [ "$PWD" = /work/main ] || ln -sfn "$PWD" /work/main; cd /work/main
export PATH=/usr/local/cuda/bin:$PATH LD_LIBRARY_PATH=/usr/local/cuda/lib64
T0=$(date +%s); el() { echo $(( $(date +%s) - T0 )); }
SD=$PWD/.device/dist/bin/sparseditto
BENCH_ARGS="--seeds kernels/seeds --resume --timing-seconds 0.15 --correctness-trials 1 --stage-timeout 30"
# bench_part GPU SUITE NAME_REGEX OUT SECONDS: one bench --resume, its rows carried in .device/s15/res/OUT.
bench_part() {
  mkdir -p $R/$4; [ -f .device/s15/res/$4/bench.json ] && cp .device/s15/res/$4/bench.* $R/$4/
  CUDA_VISIBLE_DEVICES=$1 timeout $5 $SD bench --suite $2 --name "$3" --out $R/$4 $BENCH_ARGS --cache /tmp/c$1 > $R/$4.stdout.txt 2>&1
  echo "bench $4 on GPU $1 rc $? at $(el) s: $(grep -c . $R/$4/bench.csv 2>/dev/null) csv lines"
}
nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
