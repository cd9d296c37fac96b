// A CPU replay of every CTA of nm24_wgmma_sp's kernel through wgmma_sp_emulation.h, for both transports
// and both layouts of B and C. Include after kernels/seeds/nm24_wgmma_sp.cu (it uses the seed's tiles,
// offsets and descriptors, which live in that file's unnamed namespace).
#ifndef SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_WGMMA_REPLAY_H_
#define SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_WGMMA_REPLAY_H_

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/seeds/testing/nm24_emulation.h"
#include "kernels/seeds/testing/wgmma_sp_emulation.h"

namespace {

using sparseditto::seed_testing::Csr;
using sparseditto::seed_testing::Dense;
using sparseditto::seed_testing::Eighths;
using sparseditto::seed_testing::RandomNmCsr;
using sparseditto::seed_testing::Smem;
using sparseditto::seed_testing::Swz128;

Nm24WgHost Build(const Csr& m) {
  Nm24WgHost h;
  std::string why;
  EXPECT_TRUE(BuildNm24Wg(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  return h;
}

// What a warpgroup's threads hold as metadata for step s of a stage (the kernel's uint2 load).
std::array<uint32_t, 128> ThreadMeta(const Smem& s, uint32_t record, int step) {
  std::array<uint32_t, 128> e;
  for (int t = 0; t < 128; ++t) std::memcpy(&e[t], s.data() + record + kAImageBytes + 4 * MetaThreadWord(t) + 4 * step, 4);
  return e;
}

// Where the dense operands lie: B's (k, j) in `b` and C's (i, j) in the output, for `rows` x `cols` A.
struct ReplayLayout {
  bool nk = false;
  int64_t BIndex(int64_t k, int64_t j, int64_t cols, int64_t n) const { return nk ? j * cols + k : k * n + j; }
  int64_t CIndex(int64_t i, int64_t j, int64_t rows, int64_t n) const { return nk ? j * rows + i : i * n + j; }
};

// Every CTA of Nm24WgmmaSpKernel<T, TL, tma, nk>: records copied into the stage (bulk copy or cp.async: the
// same bytes); B as the tensor copy lands it (64 x 64 boxes, 128-byte swizzle: 16-byte chunk c of box line
// r at chunk c ^ (r % 8), lines of 128 bytes; boxes past n not copied: NaN here) or as the threads write it
// (BOffset / BOffsetNk, zeros outside); the two steps' descriptors, the instruction's imm-trans-b
// (TransB) and metadata; the accumulators' coordinates. per < ktiles: split-K over clusters of
// ceil(ktiles / per) CTAs (SplitTiles): each rank's accumulators parked at PartialUnit, then
// ClusterReduce's walk (rank r: units r * 256 + thread, step 256 * splits), summed over the ranks in rank
// order, stored in pairs through StorePair's guards. Every C value must be written exactly once.
template <class TL, typename T = __half>
std::vector<float> Replay(const Nm24WgHost& h, const std::vector<float>& b, int64_t n, bool tma, int per = 0, bool nk = false) {
  using sparseditto::seed_testing::EmuWgmmaSp;
  using sparseditto::seed_testing::PutValue;
  const ReplayLayout layout{nk};
  const int64_t rows = h.rows, cols = h.cols;
  const int ktiles = static_cast<int>(h.kp / kBk);
  if (per <= 0) per = ktiles;
  const int splits = (ktiles + per - 1) / per;
  const Smem records = PackRecords<T>(h);
  std::vector<float> c(rows * n, std::numeric_limits<float>::quiet_NaN());
  std::vector<int> writes(rows * n, 0);
  auto store = [&](int64_t row, int64_t col, float x) {
    if (row >= rows || col >= n) return;
    c[layout.CIndex(row, col, rows, n)] = x;
    ++writes[layout.CIndex(row, col, rows, n)];
  };
  for (int64_t bx = 0; bx < h.mp / kBm; ++bx)
    for (int64_t n0 = 0; n0 < n; n0 += TL::kBn) {
      std::vector<std::vector<float>> partial(splits);  // each rank's partial tile, float4 units as float x 4
      std::vector<float> acc;
      for (int rank = 0; rank < splits; ++rank) {
        int kt0, count;
        SplitTiles(rank, ktiles, per, &kt0, &count);
        EXPECT_GE(count, 1) << "no empty split";
        acc.assign(2 * 64 * TL::kBn, 0.0f);  // [wg][t][i]
        const int pieces = static_cast<int>(std::min<int64_t>(TL::kPieces, (n - n0 + 63) / 64));
        for (int64_t kt = kt0; kt < kt0 + count; ++kt) {
          Smem s(TL::kStageBytes, 0xFF);  // 0xFFFF is a NaN in fp16 and bf16: anything not written poisons what reads it
          for (int r = 0; r < 2; ++r)
            std::copy(records.begin() + ((2 * bx + r) * ktiles + kt) * kRecordBytes, records.begin() + ((2 * bx + r) * ktiles + kt + 1) * kRecordBytes,
                      s.begin() + TL::kBBytes + r * kRecordBytes);
          for (int k = 0; k < kBk; ++k)
            for (int col = 0; col < TL::kBn; ++col) {
              const int64_t gk = kt * kBk + k, gc = n0 + col;
              const float v = gk < cols && gc < n ? b[layout.BIndex(gk, gc, cols, n)] : 0.0f;
              // The box's line: a K row of B (KN) or a row of X (NK); its 128 bytes: 64 columns or 64 K values.
              const int line = nk ? col % 64 : k, at = nk ? k : col % 64;
              if (tma) {
                if (col / 64 < pieces) PutValue<T>(s, (col / 64) * kBPieceBytes + Swz128(line * 128 + at * 2), v);
              } else {
                PutValue<T>(s, nk ? BOffsetNk(k, col) : BOffset(k, col), v);
              }
            }
          for (int wg = 0; wg < 2; ++wg) {
            std::vector<float> d(acc.begin() + wg * 64 * TL::kBn, acc.begin() + (wg + 1) * 64 * TL::kBn);
            const uint32_t record = TL::kBBytes + wg * kRecordBytes;
            for (int step = 0; step < 2; ++step) {
              const uint64_t db = nk ? BDescFor<true>(0, step) : BDescFor<false>(0, step);
              EmuWgmmaSp<T>(s, ADesc(record, step), db, nk ? TransB<true>() : TransB<false>(), ThreadMeta(s, record, step), TL::kBn, d);
            }
            std::copy(d.begin(), d.end(), acc.begin() + wg * 64 * TL::kBn);
          }
        }
        if (splits == 1) break;
        std::vector<float>& mine = partial[rank];
        mine.assign(TL::kPartialBytes / 4, std::numeric_limits<float>::quiet_NaN());
        for (int wg = 0; wg < 2; ++wg)
          for (int t = 0; t < 128; ++t)
            for (int q = 0; q < TL::kBn / 8; ++q) {
              const int u = PartialUnit(TL::kBn, wg, q, t);
              EXPECT_TRUE(u >= 0 && 16 * (u + 1) <= TL::kPartialBytes && 16 * (u + 1) <= TL::kDataBytes);
              EXPECT_TRUE(std::isnan(mine[4 * u])) << "unit " << u << " written twice";
              for (int x = 0; x < 4; ++x) mine[4 * u + x] = acc[(wg * 128 + t) * (TL::kBn / 2) + 4 * q + x];
            }
      }
      if (splits == 1) {
        for (int wg = 0; wg < 2; ++wg)
          for (int t = 0; t < 128; ++t)
            for (int i = 0; i < TL::kBn / 2; ++i) {
              int r, cc;
              AccCoord(t, i, &r, &cc);
              store(bx * kBm + 64 * wg + r, n0 + cc, acc[(wg * 128 + t) * (TL::kBn / 2) + i]);
            }
        continue;
      }
      constexpr int kUnits = 2 * (TL::kBn / 8) * 128;
      for (int rank = 0; rank < splits; ++rank)
        for (int thread = 0; thread < kConsumers; ++thread)
          for (int u = rank * kConsumers + thread; u < kUnits; u += kConsumers * splits) {
            float sum[4] = {0, 0, 0, 0};
            for (int s = 0; s < splits; ++s)
              for (int x = 0; x < 4; ++x) sum[x] += partial[s][4 * u + x];
            int uw, uq, ut, r, cc;
            PartialUnitCoord(TL::kBn, u, &uw, &uq, &ut);
            AccCoord(ut, 4 * uq, &r, &cc);
            const int64_t row = bx * kBm + 64 * uw + r, col = n0 + cc;
            // StorePair: (row, col) and (row, col + 1), the latter only inside n.
            store(row, col, sum[0]);
            if (col + 1 < n) store(row, col + 1, sum[1]);
            store(row + 8, col, sum[2]);
            if (col + 1 < n) store(row + 8, col + 1, sum[3]);
          }
    }
  for (size_t i = 0; i < writes.size(); ++i) EXPECT_EQ(writes[i], 1) << "C value " << i << " written " << writes[i] << " times";
  return c;
}

// A random 2:4 A (rows x cols) times a random B (cols x n; given as X for nk), replayed, equals the plain
// product (C, or Y for nk) exactly: the test values keep every product and sum exact.
template <class TL, typename T = __half>
void ExpectReplayMatches(int64_t rows, int64_t cols, int64_t n, bool tma, int per = 0, bool nk = false) {
  SCOPED_TRACE(::testing::Message() << rows << "x" << cols << " tile " << TL::kBn << " n " << n << (tma ? " tma" : " threads")
                                    << " K tiles a split " << per << (nk ? " NK" : " KN") << (std::is_same<T, __half>::value ? " fp16" : " bf16"));
  const ReplayLayout layout{nk};
  const Csr m = RandomNmCsr(rows, cols, static_cast<uint32_t>(rows + 17 * cols + n));
  const Nm24WgHost h = Build(m);
  std::mt19937 rng(static_cast<uint32_t>(n * 3 + 1));
  std::vector<float> b(cols * n);
  for (float& x : b) x = Eighths(rng);
  const std::vector<float> c = Replay<TL, T>(h, b, n, tma, per, nk), dense = Dense(m);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < cols; ++k) want += double(dense[r * cols + k]) * b[layout.BIndex(k, j, cols, n)];
      ASSERT_EQ(c[layout.CIndex(r, j, rows, n)], static_cast<float>(want)) << "C[" << r << "][" << j << "]";
    }
}

}  // namespace

#endif  // SPARSEDITTO_KERNELS_SEEDS_TESTING_NM24_WGMMA_REPLAY_H_
