#!/usr/bin/env python3
"""Lab (not product code): the seeds' cross-thread hand-offs in the forms compute-sanitizer racecheck does and does
not follow, written from the seeds as they are into OUT_DIR (README.md beside this says what was measured):

  <stream seed>_mbarrier.cu   the push reduce as it was: each rank arrives on the owner's mbarrier, which counts
                              every push; only owners wait on it (racecheck: "a block that might have exited").
  <stream seed>_fullsync.cu   every rank waits on the cluster barrier after its push, not only the owners.
  nm24_wgmma_sp_elected.cu    lane 0 of each consumer warp arrives on a stage's "empty" mbarrier after
                              __syncwarp() (8 arrivals a phase; racecheck: the refill races the other lanes' reads).

  python3 dev/racecheck_sync/make_variants.py OUT_DIR
"""
import pathlib
import sys

SEEDS = pathlib.Path(__file__).resolve().parents[2] / "kernels" / "seeds"
START = '  if (splits > 1) asm volatile("barrier.cluster.arrive.relaxed.aligned;\\n" ::: "memory");\n'
ARRIVE = '  asm volatile("barrier.cluster.arrive.release.aligned;\\n" ::: "memory");\n'
RETURN = "  if (owner != split) return;\n"
WAIT = '  asm volatile("barrier.cluster.wait.acquire.aligned;\\n" ::: "memory");  // every rank\'s pushes landed\n'
MBARRIER_START = '''  __shared__ __align__(8) uint64_t bar;  // the owner's: every (rank, owned tile) lane arrives once
  if (splits > 1) {
    const int owned = split < WARPS ? (WARPS - split + splits - 1) / splits : 0;
    if (threadIdx.x == 0 && owned > 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\\n" ::"r"(SmemAddr(&bar)), "r"(owned * splits * 32) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;\\n" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\\n" ::: "memory");
  }
'''
MBARRIER_ARRIVE = ('  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\\n" '
                   '::"r"(MapRank(SmemAddr(&bar), owner)) : "memory");\n')
MBARRIER_WAIT = '''  for (uint32_t done = 0; !done;)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }\\n"
                 : "=r"(done) : "r"(SmemAddr(&bar)) : "memory");
'''


def replace_once(text, old, new, what):
    if text.count(old) != 1:
        sys.exit(f"make_variants: {what}: expected one match, found {text.count(old)} (the seed changed?)")
    return text.replace(old, new)


def main():
    out = pathlib.Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for seed in ("nm24_stream_sp", "u14_stream_sp"):
        src = (SEEDS / f"{seed}.cu").read_text()
        mbarrier = replace_once(src, START, MBARRIER_START, f"{seed} start")
        mbarrier = replace_once(mbarrier, ARRIVE + RETURN + WAIT, MBARRIER_ARRIVE + RETURN + MBARRIER_WAIT, f"{seed} push")
        (out / f"{seed}_mbarrier.cu").write_text(mbarrier)
        (out / f"{seed}_fullsync.cu").write_text(replace_once(src, ARRIVE + RETURN + WAIT, ARRIVE + WAIT + RETURN, seed))
    src = (SEEDS / "nm24_wgmma_sp.cu").read_text()
    src = replace_once(src, "constexpr int kEmptyArrivals = kConsumers;", "constexpr int kEmptyArrivals = kConsumerWarps;",
                       "arrivals")
    src = replace_once(src, "        if (done >= 0) MbarArrive(empty(done));",
                       "        __syncwarp();\n        if (done >= 0 && (threadIdx.x & 31) == 0) MbarArrive(empty(done));", "arrive")
    (out / "nm24_wgmma_sp_elected.cu").write_text(src)


if __name__ == "__main__":
    main()
