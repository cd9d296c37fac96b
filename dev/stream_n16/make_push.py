#!/usr/bin/env python3
"""Writes the push-reduce lab variant of a stream seed (nm24_stream_sp, u14_stream_sp): the same kernel
with its cluster K-split reduce replaced (see README.md). Usage: make_push.py SEED.cu OUT.cu"""
import sys

src, dst = sys.argv[1], sys.argv[2]
s = open(src).read()
# A seed with layouts instantiates its roles per layout (<T, kNk>); one without, per type (<T>).
targs = 'T, kNk' if 'StoreTile<T, kNk>' in s else 'T'
tail_start = s.index('  if (splits == 1) return StoreTile<%s>(p, mt, n0, acc);' % targs)
tail_end = s.index('  cluster.sync();  // no rank leaves while another may still read its shared memory\n') + len(
    '  cluster.sync();  // no rank leaves while another may still read its shared memory\n')
s = s[:tail_start] + (r'''  if (splits == 1) return StoreTile<T>(p, mt, n0, acc);
  // Push, not pull: each rank stores its partial of row tile `warp` into the owner's slot (rank, tile) over
  // DSMEM and arrives on the owner's mbarrier; only owners wait, and no rank waits for another's reads.
  asm volatile("barrier.cluster.wait.aligned;\n" ::: "memory");  // every rank's mbarrier is initialised
  const int owner = warp % splits, slot = (warp / splits) * splits + split;
  const uint32_t dst = MapRank(SmemAddr(red + (slot * 32 + lane) * 8), owner);
  StoreRemote4(dst, acc[0]), StoreRemote4(dst + 16, acc[1]);
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(MapRank(SmemAddr(&bar), owner)) : "memory");
  if (owner != split) return;
  WaitParity0(SmemAddr(&bar));
  float sum[2][4] = {};
  for (int s = 0; s < splits; ++s) {  // rank order: deterministic
    const float4* theirs = reinterpret_cast<const float4*>(red + (((warp / splits) * splits + s) * 32 + lane) * 8);
    const float4 x = theirs[0], y = theirs[1];
    sum[0][0] += x.x, sum[0][1] += x.y, sum[0][2] += x.z, sum[0][3] += x.w;
    sum[1][0] += y.x, sum[1][1] += y.y, sum[1][2] += y.z, sum[1][3] += y.w;
  }
  StoreTile<T>(p, mt, n0, sum);
''').replace('<T>', '<%s>' % targs) + s[tail_end:]
start = '  LoadBSlab<%s>(sb, p, kt0, count, n0);\n' % targs
assert s.count(start) == 1
s = s.replace(start, r'''  __shared__ __align__(8) uint64_t bar;  // the owner's: every (rank, owned tile) lane arrives once
  if (splits > 1) {
    const int owned = split < WARPS ? (WARPS - split + splits - 1) / splits : 0;
    if (threadIdx.x == 0 && owned > 0) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(SmemAddr(&bar)), "r"(owned * splits * 32) : "memory");
      asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
  }
''' + start)
prims = '// D += A(16x32'
assert s.count(prims) == 1
s = s.replace(prims, r'''__device__ __forceinline__ uint32_t MapRank(uint32_t local, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
__device__ __forceinline__ void StoreRemote4(uint32_t addr, const float (&v)[4]) {
  asm volatile("st.shared::cluster.v4.f32 [%0], {%1,%2,%3,%4};\n" ::"r"(addr), "f"(v[0]), "f"(v[1]), "f"(v[2]), "f"(v[3]) : "memory");
}
__device__ __forceinline__ void WaitParity0(uint32_t bar) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }\n"
                 : "=r"(done) : "r"(bar) : "memory");
}
''' + prims)
red = 'constexpr int kRedBytes = WARPS * 32 * 8 * 4;'
assert s.count(red) == 1
s = s.replace(red, 'constexpr int kRedBytes = (WARPS + kMaxSplits - 1) * 32 * 8 * 4;  // push slots (rank, owned tile);')
s = '// LAB VARIANT (dev/stream_n16/make_push.py): the cluster reduce pushes partials to the owner.\n' + s
open(dst, 'w').write(s)
