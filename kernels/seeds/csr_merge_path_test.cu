// Host-side tests of the merge-path seed: partition bounds, the segments each partition handles, and
// the head/carry fix-up, replayed on the host against a plain CSR SpMV. No CUDA runtime calls.
#include "kernels/seeds/csr_merge_path.cu"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

struct HostCsr {
  int64_t rows = 0, cols = 0;
  std::vector<int32_t> row_offsets{0}, col_indices;
  std::vector<float> values;
};

// Random CSR; `dense_row` (if >= 0) is full, rows in `empty` have no nonzeros.
HostCsr MakeCsr(int64_t rows, int64_t cols, double density, uint32_t seed, int64_t dense_row = -1,
                std::vector<int64_t> empty = {}) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  HostCsr m;
  m.rows = rows;
  m.cols = cols;
  for (int64_t r = 0; r < rows; ++r) {
    const bool is_empty = std::find(empty.begin(), empty.end(), r) != empty.end();
    for (int64_t c = 0; c < cols && !is_empty; ++c) {
      if (r == dense_row || u(gen) < density) {
        m.col_indices.push_back(static_cast<int32_t>(c));
        m.values.push_back(static_cast<float>(u(gen) * 2.0 - 1.0));
      }
    }
    m.row_offsets.push_back(static_cast<int32_t>(m.col_indices.size()));
  }
  return m;
}

struct Case {
  std::string name;
  HostCsr m;
};

std::vector<Case> Cases() {
  return {
      {"ragged_7x96", MakeCsr(7, 96, 0.3, 1)},
      {"tall_65x33", MakeCsr(65, 33, 0.3, 2)},
      {"wide_33x200", MakeCsr(33, 200, 0.3, 3)},
      {"dense_and_empty_33x200", MakeCsr(33, 200, 0.3, 4, 0, {1, 2})},
      {"all_empty_9x5", MakeCsr(9, 5, 0.0, 5)},
      {"one_long_row_1x3000", MakeCsr(1, 3000, 0.9, 6)},
      {"long_rows_between_empty_rows", MakeCsr(12, 2000, 0.5, 7, 5, {0, 1, 2, 3, 4, 6, 7, 11})},
      {"sparse_many_empty_500x40", MakeCsr(500, 40, 0.01, 8)},
  };
}

const int64_t kItems[] = {1, 3, 8, 64, 256, 1000000};

TEST(MergePathSearch, FindsTheCoordinateOnEachDiagonal) {
  // rows: [0, 2), [2, 2) empty, [2, 5): the merge is nz0 nz1 end0 end1 nz2 nz3 nz4 end2.
  const std::vector<int32_t> ro = {0, 2, 2, 5};
  const int2 expected[] = {{0, 0}, {0, 1}, {0, 2}, {1, 2}, {2, 2}, {2, 3}, {2, 4}, {2, 5}, {3, 5}};
  for (int d = 0; d <= 8; ++d) {
    const int2 got = MergePathSearch(ro.data(), 3, 5, d);
    EXPECT_EQ(got.x, expected[d].x) << "diagonal " << d;
    EXPECT_EQ(got.y, expected[d].y) << "diagonal " << d;
  }
}

TEST(MergePathPlan, BoundsAreMonotoneAndOnTheDiagonals) {
  for (const Case& c : Cases()) {
    const int64_t nnz = c.m.row_offsets.back();
    for (int64_t items : kItems) {
      const MergePlan plan = BuildMergePlan(c.m.row_offsets.data(), c.m.rows, nnz, items);
      SCOPED_TRACE(c.name + " items " + std::to_string(items));
      ASSERT_GE(plan.parts(), 1);
      EXPECT_EQ(plan.parts(), std::max<int64_t>((c.m.rows + nnz + items - 1) / items, 1));
      EXPECT_EQ(plan.bounds.front().x, 0);
      EXPECT_EQ(plan.bounds.front().y, 0);
      EXPECT_EQ(plan.bounds.back().x, c.m.rows);
      EXPECT_EQ(plan.bounds.back().y, nnz);
      for (int p = 0; p <= plan.parts(); ++p) {
        const int2 b = plan.bounds[p];
        EXPECT_EQ(b.x + b.y, std::min<int64_t>(p * items, c.m.rows + nnz));
        // On the merge path: rows before b.x have ended by nonzero b.y, row b.x has not ended before it.
        if (b.x > 0) EXPECT_LE(c.m.row_offsets[b.x], b.y);
        if (b.x < c.m.rows) EXPECT_GE(c.m.row_offsets[b.x + 1], b.y);
        if (p > 0) {
          EXPECT_GE(b.x, plan.bounds[p - 1].x);
          EXPECT_GE(b.y, plan.bounds[p - 1].y);
        }
      }
      for (int p = 0; p < plan.parts(); ++p) EXPECT_LT(plan.bounds[p].x, c.m.rows) << "partition " << p;
    }
  }
}

// Replays both passes on the host exactly as the kernels do (SegmentOf per row, head/carry scratch,
// the fix-up list) and checks coverage and the result against a direct CSR SpMV.
TEST(MergePathPlan, SegmentsAndFixupsReproduceSpmv) {
  for (const Case& c : Cases()) {
    const int64_t nnz = c.m.row_offsets.back();
    std::vector<double> x(c.m.cols);
    for (int64_t k = 0; k < c.m.cols; ++k) x[k] = 0.25 + 0.001 * static_cast<double>(k % 97);
    std::vector<double> direct(c.m.rows, 0.0);
    for (int64_t r = 0; r < c.m.rows; ++r) {
      for (int32_t k = c.m.row_offsets[r]; k < c.m.row_offsets[r + 1]; ++k) {
        direct[r] += c.m.values[k] * x[c.m.col_indices[k]];
      }
    }
    for (int64_t items : kItems) {
      SCOPED_TRACE(c.name + " items " + std::to_string(items));
      const MergePlan plan = BuildMergePlan(c.m.row_offsets.data(), c.m.rows, nnz, items);
      std::vector<int> nonzero_uses(nnz, 0), row_writes(c.m.rows, 0), head_writes(plan.parts(), 0),
          carry_writes(plan.parts(), 0);
      std::vector<double> y(c.m.rows, 0.0), head(plan.parts(), 0.0), carry(plan.parts(), 0.0);
      for (int p = 0; p < plan.parts(); ++p) {
        const int2 lo = plan.bounds[p], hi = plan.bounds[p + 1];
        for (int r = lo.x; r <= hi.x && r < c.m.rows; ++r) {
          const Segment s = SegmentOf(c.m.row_offsets.data(), lo, hi, r);
          ASSERT_LE(s.begin, s.end);
          ASSERT_GE(s.begin, lo.y);
          ASSERT_LE(s.end, hi.y);
          ASSERT_GE(s.begin, c.m.row_offsets[r]);
          ASSERT_LE(s.end, c.m.row_offsets[r + 1]);
          double sum = 0.0;
          for (int k = s.begin; k < s.end; ++k) {
            ++nonzero_uses[k];
            sum += c.m.values[k] * x[c.m.col_indices[k]];
          }
          if (s.kind == kDirect) {
            y[r] = sum;
            ++row_writes[r];
          } else if (s.kind == kHead) {
            head[p] = sum;
            ++head_writes[p];
          } else {
            carry[p] = sum;
            ++carry_writes[p];
          }
        }
      }
      for (const int4& f : plan.fixups) {
        ASSERT_GE(f.y, 0);
        ASSERT_LT(f.y, f.z);
        ASSERT_EQ(head_writes[f.z], 1) << "head of partition " << f.z << " never written";
        double sum = 0.0;
        for (int q = f.y; q < f.z; ++q) {
          ASSERT_EQ(carry_writes[q], 1) << "carry of partition " << q << " never written";
          EXPECT_EQ(plan.bounds[q + 1].x, f.x) << "partition " << q << " carries another row";
          sum += carry[q];
        }
        y[f.x] = sum + head[f.z];
        ++row_writes[f.x];
      }
      for (int64_t k = 0; k < nnz; ++k) ASSERT_EQ(nonzero_uses[k], 1) << "nonzero " << k;
      for (int64_t r = 0; r < c.m.rows; ++r) {
        ASSERT_EQ(row_writes[r], 1) << "row " << r;
        EXPECT_NEAR(y[r], direct[r], 1e-9 * (1.0 + std::fabs(direct[r]))) << "row " << r;
      }
      // Every head written is consumed by exactly one fix-up.
      int heads = 0;
      for (int w : head_writes) heads += w;
      EXPECT_EQ(heads, static_cast<int>(plan.fixups.size()));
    }
  }
}

TEST(MergePathLaunchShape, CoversNWithAtLeastEightLanesAndAlignedVectors) {
  for (int elem_bytes : {2, 4}) {
    for (bool aligned : {true, false}) {
      for (int64_t n = 1; n <= 300; ++n) {
        const LaunchShape s = ChooseLaunchShape(n, elem_bytes, aligned);
        SCOPED_TRACE("n " + std::to_string(n) + " bytes " + std::to_string(elem_bytes));
        EXPECT_GE(s.group_log2, 3);
        EXPECT_LE(s.group_log2, 5);
        EXPECT_EQ(n % s.vec, 0);
        EXPECT_LE(s.vec * elem_bytes, VEC_BYTES);
        if (!aligned) EXPECT_EQ(s.vec, 1);
        const int64_t tile = int64_t{s.vec} * VECS_PER_LANE << s.group_log2;
        EXPECT_EQ(s.tiles, (n + tile - 1) / tile);
        if (s.group_log2 < 5) EXPECT_EQ(s.tiles, 1);  // a narrow group only when one tile covers n
        EXPECT_LE(BLOCK_THREADS >> s.group_log2, kMaxGroups);
      }
    }
  }
}

}  // namespace
