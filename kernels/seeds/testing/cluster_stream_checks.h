// Checks shared by the tests of the cluster stream seeds (nm24_stream_sp, u14_stream_sp, dense_stream). Each seed
// compiles alone, so each carries its own copy of the same plan and grid; these test every copy the same way:
// the plan's cut of K over the cluster and the B slab, and the replay skeleton of the grid (row groups x n tiles
// x K splits, each warp's partial, the cluster's rank-order sum) around the seed's own per-warp product.
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_CLUSTER_STREAM_CHECKS_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_CLUSTER_STREAM_CHECKS_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/nm24_emulation.h"

namespace sparseditto::seed_testing {

// The push reduce of a seed with `warps` row tiles a CTA, at most `max_splits` ranks and red_bytes(splits) bytes of
// slots an owner (a 16 x 16 fp32 partial a slot, sized for the run's split count): for every split count, each (row
// tile, rank) push lands in its own slot of the tile's owner (a rank of the cluster) within those slots, and the slots
// an owner reads for its tile w, in rank order, are the ones ranks 0, 1, ... pushed w to.
template <typename OwnerFn, typename SlotFn>
void ExpectPushReduceCoversEveryTile(int warps, int max_splits, int (*red_bytes)(int splits), OwnerFn owner, SlotFn slot) {
  for (int splits = 2; splits <= max_splits; ++splits) {
    SCOPED_TRACE(::testing::Message() << warps << " row tiles, " << splits << " ranks");
    const int red_slots = red_bytes(splits) / (32 * 8 * 4);
    std::vector<std::vector<int>> pushed(splits, std::vector<int>(red_slots, -1));  // owner, slot -> warp * splits + rank
    for (int w = 0; w < warps; ++w)
      for (int r = 0; r < splits; ++r) {
        const int o = owner(w, splits), at = slot(w, r, splits);
        ASSERT_TRUE(o >= 0 && o < splits) << "tile " << w << " owned by rank " << o;
        ASSERT_TRUE(at >= 0 && at < red_slots) << "tile " << w << " rank " << r << " pushes to slot " << at;
        EXPECT_EQ(pushed[o][at], -1) << "slot " << at << " of rank " << o << " written twice";
        pushed[o][at] = w * splits + r;
      }
    for (int w = 0; w < warps; ++w)
      for (int r = 0; r < splits; ++r) EXPECT_EQ(pushed[owner(w, splits)][slot(w, r, splits)], w * splits + r);
  }
}

// A seed's ldmatrix addresses as its ComputeBatch forms them, j * tile_bytes + tile0(nk, q, ni, lane) for K tile j
// (tile0: TileFragBytes, tile 0's byte offset), against its swizzled offset frag(nk, j, q, ni, lane) in 2-byte elements
// ((Nk)BFragOffset), for both layouts, every K tile a slab holds, every k step, n8 tile and lane.
template <typename Tile0Fn, typename FragFn>
void ExpectTileAddressesAddUp(int max_tiles, int steps, int n8_tiles, uint32_t tile_bytes, Tile0Fn tile0, FragFn frag) {
  for (bool nk : {false, true})
    for (int j = 0; j < max_tiles; ++j)
      for (int q = 0; q < steps; ++q)
        for (int ni = 0; ni < n8_tiles; ++ni)
          for (int lane = 0; lane < 32; ++lane)
            ASSERT_EQ(j * tile_bytes + tile0(nk, q, ni, lane), 2u * static_cast<uint32_t>(frag(nk, j, q, ni, lane)))
                << (nk ? "NK" : "KN") << " K tile " << j << " step " << q << " n8 tile " << ni << " lane " << lane;
}

// What a seed's plan is made of (its constants, not re-typed here): at most `max_splits` ranks, a slab of at
// most `max_slab_tiles` K tiles of 64 within `slab_budget` bytes (SLAB_KB), `rows_per_cta` rows a CTA, and shared
// memory of red_bytes(splits) (the reduction's slots, sized for the plan's split count) plus `fixed_smem` plus
// `slab_tile_bytes` a K tile of the slab.
struct ClusterStreamShape {
  int max_splits, max_slab_tiles;
  int64_t rows_per_cta;
  int (*red_bytes)(int splits);
  size_t fixed_smem, slab_tile_bytes, slab_budget;
};

// make_plan(mp, kp, n, sms, max_splits) over a table of shapes: the splits cover K once (no empty rank) within
// the cluster and the slab, the cap holds unless the slab forbids it, the shared memory and the cluster count
// are as the kernel launches them; n = 16 spreads K; the slab wins over the cap; K beyond eight slabs is refused.
template <typename MakePlanFn>
void ExpectClusterStreamPlan(MakePlanFn make_plan, const ClusterStreamShape& s) {
  for (int64_t n : {1, 7, 16, 32, 128})
    for (int64_t mp : {128, 4096, 11008})
      for (int64_t kp : {64, 256, 4096, 11008, 24576})
        for (int max_splits : {1, 3, 8}) {
          SCOPED_TRACE(::testing::Message() << "n " << n << " mp " << mp << " kp " << kp << " max " << max_splits);
          const auto p = make_plan(mp, kp, n, 132, max_splits);
          const int64_t ktiles = kp / 64;
          ASSERT_GE(p.splits, 1);
          EXPECT_LE(p.splits, s.max_splits);
          EXPECT_LE(p.kt_per_split, s.max_slab_tiles);
          EXPECT_GE(int64_t(p.splits) * p.kt_per_split, ktiles);
          EXPECT_LT(int64_t(p.splits - 1) * p.kt_per_split, ktiles);  // no empty split
          EXPECT_EQ(p.smem, size_t(s.red_bytes(p.splits)) + s.fixed_smem + size_t(p.kt_per_split) * s.slab_tile_bytes);
          EXPECT_LE(p.smem, size_t(s.red_bytes(s.max_splits)) + s.fixed_smem + s.slab_budget);
          EXPECT_EQ(p.clusters, mp / s.rows_per_cta * ((n + 15) / 16));
          const int64_t slab_min = (ktiles + s.max_slab_tiles - 1) / s.max_slab_tiles;
          if (slab_min <= max_splits) EXPECT_LE(p.splits, max_splits);  // the cap holds unless the slab forbids it
        }
  EXPECT_GT(make_plan(4096, 4096, 16, 132, s.max_splits).splits, 1);  // n = 16 spreads K over the cluster
  EXPECT_EQ(make_plan(4096, int64_t(s.max_slab_tiles) * 64, 16, 132, 1).splits, 1);
  EXPECT_EQ(make_plan(4096, int64_t(s.max_slab_tiles + 1) * 64, 16, 132, 1).splits, 2);  // the slab wins over the cap
  const int64_t most = int64_t(s.max_splits) * s.max_slab_tiles * 64;
  EXPECT_EQ(make_plan(128, most, 16, 132, s.max_splits).splits, s.max_splits);
  EXPECT_EQ(make_plan(128, most + 64, 16, 132, s.max_splits).splits, 0);
}

// The grid of a cluster stream kernel on the host: for every row group of `warps` row tiles (mp rows in all), n
// tile of 16 and K split (`splits` ranks of `kt_per_split` K tiles of 64), the split's B slab as LoadBSlab lays it
// out (FillSlab with the seed's `chunk` swizzle), each warp's accumulators from
// warp_product(mt, kt0, count, slab, &acc) (acc[ni * 128 + lane * 4 + i], zeroed before), and the cluster's sum
// of the ranks' partials in rank order, stored at StoreTile's coordinates. C is rows x n; NaN where nothing stored.
// ReplayClusterStreamWith takes the slab from fill_slab(kt0, count, n0) instead (another layout's slab).
template <typename FillSlabFn, typename WarpProduct>
std::vector<float> ReplayClusterStreamWith(int64_t rows, int64_t mp, int64_t kp, int64_t n, int splits, int kt_per_split, int warps,
                                           FillSlabFn&& fill_slab, WarpProduct&& warp_product) {
  const int64_t ktiles = kp / 64;
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  for (int64_t group = 0; group < mp / (16 * warps); ++group)
    for (int64_t n0 = 0; n0 < n; n0 += 16) {
      std::vector<float> red(splits * warps * 32 * 8);  // each rank's partials, lane by lane
      for (int split = 0; split < splits; ++split) {
        const int kt0 = split * kt_per_split, count = static_cast<int>(std::min<int64_t>(ktiles - kt0, kt_per_split));
        EXPECT_GT(count, 0);
        const std::vector<float> sb = fill_slab(kt0, count, n0);
        for (int warp = 0; warp < warps; ++warp) {
          std::vector<float> acc(2 * 128, 0.0f);
          warp_product(group * warps + warp, kt0, count, sb, &acc);
          StoreWarpPartial(acc, split * warps + warp, &red);
        }
      }
      ClusterSumAndStore(red, splits, warps, group, n0, rows, n, &c);
    }
  return c;
}
template <typename WarpProduct>
std::vector<float> ReplayClusterStream(int64_t rows, int64_t cols, int64_t mp, int64_t kp, const std::vector<float>& b, int64_t n,
                                       int splits, int kt_per_split, int warps, int (*chunk)(int, int), WarpProduct&& warp_product) {
  return ReplayClusterStreamWith(
      rows, mp, kp, n, splits, kt_per_split, warps,
      [&](int kt0, int count, int64_t n0) { return FillSlab(b, cols, n, kt0, count, n0, chunk); }, warp_product);
}

// The same grid in the NK layout: B given as X = B^T, the slab FillNkSlab's (the seed's `nk_offset` swizzle),
// and the sums stored at the seed's out_index(true, row, col, rows, n) in Y = C^T; returns C read back from Y.
template <typename WarpProduct>
std::vector<float> ReplayClusterStreamNk(int64_t rows, int64_t cols, int64_t mp, int64_t kp, const std::vector<float>& b, int64_t n,
                                         int splits, int kt_per_split, int warps, int (*nk_offset)(int, int, int),
                                         int64_t (*out_index)(bool, int64_t, int64_t, int64_t, int64_t), WarpProduct&& warp_product) {
  const std::vector<float> x = Transposed(b, cols, n);
  const std::vector<float> c = ReplayClusterStreamWith(
      rows, mp, kp, n, splits, kt_per_split, warps,
      [&](int kt0, int count, int64_t n0) { return FillNkSlab(x, cols, n, kt0, count, n0, nk_offset); }, warp_product);
  std::vector<float> y(c.size(), std::numeric_limits<float>::quiet_NaN());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) y[out_index(true, r, j, rows, n)] = c[r * n + j];
  return Transposed(y, n, rows);  // Y (n x rows) back to C
}

// The stream seeds' ApplyResidual for the warp of row tile `mt` over K tiles kt0 .. kt0+count-1 of `ktiles`, lane
// for lane, into acc ([ni][lane][i], fp32 fragments): list g's entries are h.residual_row / residual_col /
// residual_val [h.rstart[start(mt, kt0, g, ktiles)], h.rstart[start(mt, kt0 + count, g, ktiles)]) (`start` is the
// seed's ResidualStart); entry e adds value * B(slab row, column) to row (residual_row % 8 == g, / 8 picks i / 2) at
// columns 8ni + 2t + {0, 1}, slab row = column - kt0 * kbk, b_at(slab row, column) reading the slab. spread false:
// quad g walks list g in order. spread true (SPREAD_RESIDUAL 1): quad q takes entries q, q + 8, .. of each list into
// a partial, the quads' partials are summed by the kernel's xor butterfly (lane l + lane l ^ m, m = 4, 8, 16) and
// quad g adds the sum. Checks each entry's row pair and that it lies inside the slab's count * kbk rows.
template <typename Host, typename StartFn, typename BAt>
void ReplayStreamResidual(const Host& h, StartFn start, int64_t mt, int kt0, int count, int64_t ktiles, int kbk, bool spread, BAt b_at,
                          std::vector<float>* acc) {
  const int64_t row0 = int64_t(kt0) * kbk, slab_rows = int64_t(count) * kbk;
  for (int g = 0; g < 8; ++g) {
    const uint32_t begin = h.rstart[start(mt, kt0, g, ktiles)], end = h.rstart[start(mt, kt0 + count, g, ktiles)];
    std::vector<float> part(2 * 32 * 4, 0.0f);  // [ni][lane][i], the partials before the butterfly
    for (uint32_t e = begin; e < end; ++e) {
      const int r = static_cast<int>(h.residual_row[e]), hh = r >> 3, q = spread ? static_cast<int>((e - begin) % 8) : g;
      const int64_t row = static_cast<int64_t>(h.residual_col[e]) - row0;
      EXPECT_EQ(r & 7, g) << "entry " << e << " in its row pair's list";
      EXPECT_TRUE(row >= 0 && row < slab_rows) << "entry " << e << " inside the slab";
      for (int t = 0; t < 4; ++t)
        for (int ni = 0; ni < 2; ++ni)
          for (int x = 0; x < 2; ++x) part[ni * 128 + (4 * q + t) * 4 + 2 * hh + x] += h.residual_val[e] * b_at(row, ni * 8 + 2 * t + x);
    }
    if (spread)
      for (int m = 4; m < 32; m <<= 1) {
        std::vector<float> next(part.size());
        for (int ni = 0; ni < 2; ++ni)
          for (int l = 0; l < 32; ++l)
            for (int i = 0; i < 4; ++i) next[ni * 128 + l * 4 + i] = part[ni * 128 + l * 4 + i] + part[ni * 128 + (l ^ m) * 4 + i];
        part.swap(next);
      }
    for (int ni = 0; ni < 2; ++ni)
      for (int l = 4 * g; l < 4 * g + 4; ++l)
        for (int i = 0; i < 4; ++i) (*acc)[ni * 128 + l * 4 + i] += part[ni * 128 + l * 4 + i];
  }
}

// The longest residual list over all K of any (row tile, g) of a stream seed's host format (`start` its ResidualStart).
template <typename Host, typename StartFn>
uint32_t LongestResidualList(const Host& h, StartFn start) {
  const int64_t ktiles = h.kp / 64;
  uint32_t most = 0;
  for (int64_t mt = 0; mt < h.mp / 16; ++mt)
    for (int g = 0; g < 8; ++g) most = std::max(most, h.rstart[start(mt, ktiles, g, ktiles)] - h.rstart[start(mt, 0, g, ktiles)]);
  return most;
}

// C (rows x n) from a replay over every stored row (mp x n): stored row s is row_of[s] of C, as the stream seeds'
// StoreTile puts it (BALANCE_ROWS); a padding row (row_of -1) must come out zero.
inline std::vector<float> StoredRowsToC(const std::vector<float>& stored, const std::vector<int32_t>& row_of, int64_t rows, int64_t n) {
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  for (size_t s = 0; s < row_of.size(); ++s)
    for (int64_t j = 0; j < n; ++j) {
      if (row_of[s] >= 0) c[row_of[s] * n + j] = stored[s * n + j];
      else EXPECT_EQ(stored[s * n + j], 0.0f) << "padding row " << s;
    }
  return c;
}

// m with the given rows made dense (value 0.25 + 0.125 * (column % 5)): one row pair's residual list far longer
// than the rest, as a skewed matrix's heaviest rows give.
inline Csr WithDenseRows(const Csr& m, const std::vector<int64_t>& dense) {
  Csr out;
  out.rows = m.rows, out.cols = m.cols;
  for (int64_t r = 0; r < m.rows; ++r) {
    if (std::find(dense.begin(), dense.end(), r) != dense.end()) {
      for (int64_t c = 0; c < m.cols; ++c) out.ci.push_back(static_cast<int32_t>(c)), out.v.push_back(0.25f + 0.125f * float(c % 5));
    } else {
      for (int32_t e = m.ro[r]; e < m.ro[r + 1]; ++e) out.ci.push_back(m.ci[e]), out.v.push_back(m.v[e]);
    }
    out.ro.push_back(static_cast<int32_t>(out.ci.size()));
  }
  return out;
}

}  // namespace sparseditto::seed_testing

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_CLUSTER_STREAM_CHECKS_H_
