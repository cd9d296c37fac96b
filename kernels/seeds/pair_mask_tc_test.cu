// CPU tests of the pair_mask_tc seed's host side: the format re-expanded lane by lane through the mma.sync
// m16n8k16 A-fragment layout (the kernel's own LaneRegister) gives back the matrix over awkward shapes; the
// record layout (masks, starts, padding, the slot's spare chunk that LaneRegister may read); the launch plan
// (K splits, slab, shared memory) over the llm shapes; the workspace index; prepare's refusal of fp32.
// No CUDA runtime calls.
#include "kernels/seeds/pair_mask_tc.cu"

#include <random>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/random_csr16.h"

namespace {

using Csr = sparseditto::seed_testing::Csr16;
using sparseditto::seed_testing::RandomCsr16;

PairFormat Build(const Csr& m) {
  PairFormat f;
  std::string error;
  EXPECT_TRUE(BuildPairFormat(m.rows, m.cols, m.offsets.data(), m.cols_of.data(), m.bits.data(), &f, &error))
      << error;
  return f;
}

const uint32_t* Record(const PairFormat& f, int rt, int kt) {
  return f.data.data() + size_t{f.toff[size_t(rt) * f.k_tiles + kt]} * 4;
}
uint32_t Start(const uint32_t* rec, int s) { return (rec[16 + s / 2] >> (16 * (s % 2))) & 0xFFFFu; }

// Every record decoded as the kernel does: lane L of sub-block s (k step s / 4, register s % 4) holds rows
// g = L / 4 (+ 8 for registers 1 and 3), columns 2 (L % 4) + {0, 1} (+ 8 for registers 2 and 3), low half
// first (PTX ISA, mma.m16n8k16 A fragment for .f16/.bf16).
std::vector<uint16_t> ExpandByLane(const PairFormat& f) {
  const int64_t prow = int64_t{f.row_tiles} * 16, pcol = int64_t{f.k_tiles} * kTileK;
  std::vector<uint16_t> d(prow * pcol, 0);
  for (int rt = 0; rt < f.row_tiles; ++rt)
    for (int kt = 0; kt < f.k_tiles; ++kt) {
      const uint32_t* rec = Record(f, rt, kt);
      for (int s = 0; s < kSubBlocks; ++s)
        for (int lane = 0; lane < 32; ++lane) {
          const uint32_t v = LaneRegister(rec[s], Start(rec, s), rec + kHeaderChunks * 4, lane);
          const int64_t r = rt * 16 + lane / 4 + (s % 2) * 8;
          const int64_t c = int64_t{kt} * kTileK + (s / 4) * 16 + ((s % 4) / 2) * 8 + (lane % 4) * 2;
          d[r * pcol + c] = static_cast<uint16_t>(v & 0xFFFFu), d[r * pcol + c + 1] = static_cast<uint16_t>(v >> 16);
        }
    }
  return d;
}

void CheckRoundTrip(const Csr& m) {
  SCOPED_TRACE(testing::Message() << m.rows << " x " << m.cols << ", " << m.bits.size() << " nonzeros");
  const PairFormat f = Build(m);
  ASSERT_EQ(f.row_tiles, CeilDiv(m.rows, 16));
  ASSERT_EQ(f.k_tiles, CeilDiv(m.cols, kTileK));
  ASSERT_EQ(f.toff.size(), size_t(f.row_tiles) * f.k_tiles + 1);
  const int64_t pcol = int64_t{f.k_tiles} * kTileK;
  std::vector<uint16_t> want(int64_t{f.row_tiles} * 16 * pcol, 0);
  for (int64_t r = 0; r < m.rows; ++r)
    for (int32_t e = m.offsets[r]; e < m.offsets[r + 1]; ++e) want[r * pcol + m.cols_of[e]] = m.bits[e];
  EXPECT_TRUE(ExpandByLane(f) == want);
}

TEST(PairMaskTcFormat, AwkwardShapesRoundTripThroughTheFragmentLayout) {
  CheckRoundTrip(RandomCsr16(7, 96, 0.3, 1));
  CheckRoundTrip(RandomCsr16(7, 40, 0.5, 2));
  CheckRoundTrip(RandomCsr16(65, 33, 0.3, 3));
  CheckRoundTrip(RandomCsr16(33, 200, 0.1, 4));
  CheckRoundTrip(RandomCsr16(33, 200, 0.5, 5, {0}, {1, 2}));  // one dense row, empty rows
  CheckRoundTrip(RandomCsr16(1, 1, 1.0, 6));
  CheckRoundTrip(RandomCsr16(16, 64, 1.0, 7));                // one full tile
  CheckRoundTrip(RandomCsr16(130, 300, 0.9, 8));
  CheckRoundTrip(RandomCsr16(48, 1000, 0.02, 9));
}

TEST(PairMaskTcFormat, RecordsAreHeaderMasksStartsAndWholePairs) {
  const Csr m = RandomCsr16(40, 150, 0.2, 10);
  const PairFormat f = Build(m);
  uint32_t largest = 0;
  for (size_t i = 0; i + 1 < f.toff.size(); ++i) {
    const uint32_t* rec = f.data.data() + size_t{f.toff[i]} * 4;
    uint32_t count = 0;
    for (int s = 0; s < kSubBlocks; ++s) {
      ASSERT_EQ(Start(rec, s), count) << "record " << i << " sub-block " << s;
      count += Popcount32(rec[s]);
    }
    const uint32_t chunks = f.toff[i + 1] - f.toff[i];
    ASSERT_EQ(chunks, static_cast<uint32_t>(kHeaderChunks + (count + 3) / 4)) << "record " << i;
    for (uint32_t w = count; w < (chunks - kHeaderChunks) * 4; ++w) ASSERT_EQ(rec[kHeaderChunks * 4 + w], 0u);
    for (uint32_t w = 0; w < count; ++w) ASSERT_NE(rec[kHeaderChunks * 4 + w], 0u) << "a kept pair holds a nonzero";
    largest = std::max(largest, chunks);
  }
  EXPECT_EQ(f.max_record_chunks, largest);
  EXPECT_EQ(f.toff.back(), f.data.size() / 4);
}

TEST(PairMaskTcFormat, EmptyAndFullTiles) {
  const PairFormat empty = Build(RandomCsr16(20, 70, 0.0, 11));
  EXPECT_EQ(empty.max_record_chunks, static_cast<uint32_t>(kHeaderChunks));
  for (size_t i = 0; i + 1 < empty.toff.size(); ++i) EXPECT_EQ(empty.toff[i + 1] - empty.toff[i], 6u);
  const PairFormat full = Build(RandomCsr16(16, kTileK, 1.0, 12));
  ASSERT_EQ(full.toff.size(), 2u);
  EXPECT_EQ(full.toff[1], static_cast<uint32_t>(kHeaderChunks + kSubBlocks * 32 / 4));  // every pair kept
  for (int s = 0; s < kSubBlocks; ++s) EXPECT_EQ(full.data[s], 0xFFFFFFFFu);
}

TEST(PairMaskTcFormat, OneNonzeroKeepsItsPairWithAZeroHalf) {
  // Element (9, 21) of a tile: sub-block (21 / 16) * 4 + (21 % 16) / 8 * 2 + 9 / 8 = 4 + 0 + 1 = 5; pair
  // (9 % 8) * 4 + (21 % 8) / 2 = 6; odd column: the high half.
  Csr m{16, 64};
  m.offsets.assign(17, 0);
  for (int r = 10; r <= 16; ++r) m.offsets[r] = 1;
  m.cols_of = {21}, m.bits = {0xABCD};
  const PairFormat f = Build(m);
  EXPECT_EQ(SubBlockOf(9, 21), 5);
  EXPECT_EQ(PairOf(9, 21), 6);
  const uint32_t* rec = Record(f, 0, 0);
  for (int s = 0; s < kSubBlocks; ++s) EXPECT_EQ(rec[s], s == 5 ? 1u << 6 : 0u) << s;
  EXPECT_EQ(rec[kHeaderChunks * 4], 0xABCDu << 16);
  EXPECT_EQ(LaneRegister(rec[5], Start(rec, 5), rec + kHeaderChunks * 4, 6), 0xABCDu << 16);
  EXPECT_EQ(LaneRegister(rec[5], Start(rec, 5), rec + kHeaderChunks * 4, 7), 0u);
}

TEST(PairMaskTcFormat, LaneReadsStayInsideTheRecordSlot) {
  // LaneRegister loads for every lane, present or not; the index must stay inside a slot of
  // RecordSlotChunks(max record) chunks, whichever record the slot holds.
  for (double density : {0.05, 0.5, 1.0}) {
    const PairFormat f = Build(RandomCsr16(32, 256, density, 13));
    const uint32_t slot_words = RecordSlotChunks(f.max_record_chunks) * 4;
    for (size_t i = 0; i + 1 < f.toff.size(); ++i) {
      const uint32_t* rec = f.data.data() + size_t{f.toff[i]} * 4;
      for (int s = 0; s < kSubBlocks; ++s)
        for (int lane = 0; lane < 32; ++lane) {
          const uint32_t index = kHeaderChunks * 4 + Start(rec, s) + Popcount32(rec[s] & ((1u << lane) - 1u));
          ASSERT_LT(index, slot_words) << "density " << density << " record " << i << " s " << s << " lane " << lane;
        }
    }
  }
}

TEST(PairMaskTcFormat, RefusesSizesOutOfRange) {
  PairFormat f;
  std::string error;
  const int32_t offsets[2] = {0, 0};
  EXPECT_FALSE(BuildPairFormat(0, 10, offsets, nullptr, nullptr, &f, &error));
  EXPECT_EQ(error, "matrix size out of range");
  EXPECT_FALSE(BuildPairFormat(1, int64_t{1} << 31, offsets, nullptr, nullptr, &f, &error));
}

// ---- launch plan ----------------------------------------------------------------------------------
constexpr int kH200Sms = 132, kH200Smem = 227 * 1024;

TEST(PairMaskTcPlan, SplitsCoverKAndFitTheSlab) {
  for (auto [rows, cols] : {std::pair{4096, 4096}, {4096, 11008}, {11008, 4096}, {8192, 8192}, {7, 40}, {512, 96}})
    for (uint32_t slot : {7u, 40u, RecordSlotChunks(kHeaderChunks + kSubBlocks * 8)})
      for (int64_t n : {1, 16, 17, 32, 64, 128, 2048}) {
        SCOPED_TRACE(testing::Message() << rows << " x " << cols << " slot " << slot << " n " << n);
        const int row_tiles = static_cast<int>(CeilDiv(rows, 16)), k_tiles = static_cast<int>(CeilDiv(cols, kTileK));
        Plan plan;
        ASSERT_TRUE(MakePlan(row_tiles, k_tiles, slot, kH200Sms, kH200Smem, n, &plan));
        EXPECT_EQ(plan.ncols % 16, 0);
        EXPECT_LE(plan.ncols, N_TILE);
        EXPECT_GE(int64_t{plan.ncols} * plan.grid.z, n);
        EXPECT_LT(int64_t{plan.ncols} * (plan.grid.z - 1), n);
        EXPECT_GE(int64_t{plan.split_tiles} * plan.splits, k_tiles);  // every K tile in a split
        EXPECT_LT(int64_t{plan.split_tiles} * (plan.splits - 1), k_tiles);  // no empty split
        EXPECT_EQ(plan.grid.y, static_cast<unsigned>(plan.splits));
        EXPECT_EQ(int64_t{plan.grid.x} * WARPS, CeilDiv(row_tiles, WARPS) * WARPS);
        EXPECT_LE(SlabBytes(plan.split_tiles, plan.ncols), size_t{SLAB_KB} * 1024);
        EXPECT_EQ(plan.smem, SlabBytes(plan.split_tiles, plan.ncols) + RingBytes(slot));
        EXPECT_LE(plan.smem, static_cast<size_t>(kH200Smem));
        EXPECT_EQ(plan.tiles, plan.splits > 1 ? size_t(row_tiles) * plan.grid.z : 0u);
      }
}

TEST(PairMaskTcPlan, SplitCountTable) {
  // The split aims at ITEMS_PER_SM warps per SM: round(ITEMS_PER_SM * 132 / row tiles) splits, fewer when
  // there are not that many K tiles, more when the slab would not fit.
  Plan plan;
  ASSERT_TRUE(MakePlan(4096 / 16, 4096 / kTileK, 40, kH200Sms, kH200Smem, 16, &plan));
  const int64_t want = (int64_t{ITEMS_PER_SM} * kH200Sms + 128) / 256;
  EXPECT_EQ(plan.split_tiles, CeilDiv(64, want));
  ASSERT_TRUE(MakePlan(1, 3, 40, kH200Sms, kH200Smem, 16, &plan));  // one row tile: one K tile per split
  EXPECT_EQ(plan.splits, 3);
  ASSERT_TRUE(MakePlan(100000, 20, 40, kH200Sms, kH200Smem, 16, &plan));  // rows enough, slab fits: no split...
  EXPECT_EQ(plan.splits, 1);
  EXPECT_EQ(plan.ws_floats, 0u);
  ASSERT_TRUE(MakePlan(100000, 20000, 40, kH200Sms, kH200Smem, 16, &plan));  // ...unless B's rows overflow the slab
  EXPECT_EQ(plan.split_tiles, static_cast<int>(size_t{SLAB_KB} * 1024 / SlabBytes(1, 16)));
  EXPECT_FALSE(MakePlan(256, 64, 40, kH200Sms, 4096, 16, &plan));  // no room for rings and one K tile of B
  EXPECT_FALSE(MakePlan(256, 64, 40, kH200Sms, kH200Smem, 0, &plan));
}

TEST(PairMaskTcPlan, WorkspaceIndexIsOneToOne) {
  Plan plan;
  ASSERT_TRUE(MakePlan(12, 40, 40, kH200Sms, kH200Smem, 40, &plan));
  ASSERT_GT(plan.splits, 1);
  std::vector<char> seen(plan.ws_floats, 0);
  for (size_t t = 0; t < plan.tiles; ++t)
    for (int z = 0; z < plan.splits; ++z)
      for (int j = 0; j < plan.ncols / 8; ++j)
        for (int r = 0; r < 4; ++r)
          for (int lane = 0; lane < 32; ++lane) {
            const size_t i = WsIndex(t, z, plan.splits, plan.ncols, j, r, lane);
            ASSERT_LT(i, plan.ws_floats);
            ASSERT_EQ(seen[i]++, 0);
          }
  EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(plan.ws_floats));
}

TEST(PairMaskTcPrepare, RefusesFp32WithTheReason) {
  const int32_t offsets[2] = {0, 0};
  const int64_t n_values[1] = {16};
  sd_problem p{};
  p.dtype = SD_DTYPE_FP32, p.rows = 1, p.cols = 1, p.row_offsets = offsets, p.n_values = n_values;
  p.num_n_values = 1;
  void* state = nullptr;
  char error[256] = {};
  EXPECT_EQ(sparseditto_prepare(&p, &state, error, sizeof(error)), 1);
  EXPECT_EQ(state, nullptr);
  EXPECT_STREQ(error, "pair_mask_tc prepare: dtype 1 unsupported (fp16, bf16 only) or not in this build");
}

}  // namespace
