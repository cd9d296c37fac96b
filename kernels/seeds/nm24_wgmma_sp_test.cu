// CPU tests of the wgmma.sp 2:4 seed (no GPU), KN layout (nm24_wgmma_sp_nk_test.cu: NK): BuildNm24Wg's
// records (A image + metadata, as uploaded by PackRecords) read back through an emulation of
// wgmma.mma_async.sp m64nNk32 written from the PTX ISA's definitions (testing/wgmma_sp_emulation.h says
// which rule came from where) and compared with the CSR input; refusal of a non-2:4 matrix; the descriptors'
// fields; the staged C store; the tunable declarations; and a replay of every CTA of both transports
// (the kernel's stage offsets, step descriptors, metadata loads, store coordinates) against a plain product.
// What the hardware does with a descriptor is only checked on the GPU (evaluator correctness).
#define SD_NM24_WGMMA_SP_HOST_TEST 1
#include "kernels/seeds/nm24_wgmma_sp.cu"

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "gtest/gtest.h"
#include "kernel_abi/tunables.h"
#include "kernels/seeds/testing/nm24_emulation.h"
#include "kernels/seeds/testing/nm24_wgmma_replay.h"
#include "kernels/seeds/testing/wgmma_sp_emulation.h"

namespace {

// The emulation's names as this file's tests use them (fp16 throughout).
uint32_t Start(uint64_t d) { return sparseditto::seed_testing::DescStart(d); }
uint32_t Lbo(uint64_t d) { return sparseditto::seed_testing::DescLbo(d); }
uint32_t Sbo(uint64_t d) { return sparseditto::seed_testing::DescSbo(d); }
using sparseditto::seed_testing::Swz64;

TEST(Nm24WgmmaSpBuild, RecordsDecodeToTheCsrMatrix) {
  struct Case { int64_t rows, cols; };
  for (const Case& c : {Case{7, 96}, Case{130, 200}, Case{4096, 64}, Case{1, 4}, Case{65, 36}, Case{3, 6}, Case{128, 128}}) {
    SCOPED_TRACE(::testing::Message() << c.rows << "x" << c.cols);
    const Csr m = RandomNmCsr(c.rows, c.cols, static_cast<uint32_t>(c.rows * 13 + c.cols));
    const Nm24WgHost h = Build(m);
    ASSERT_EQ(h.mp % kBm, 0);
    ASSERT_EQ(h.kp % kBk, 0);
    ASSERT_GE(h.mp, c.rows);
    ASSERT_GE(h.kp, c.cols);
    const int64_t ktiles = h.kp / kBk;
    const Smem bytes = PackRecords<__half>(h);
    ASSERT_EQ(static_cast<int64_t>(bytes.size()), h.mp / 64 * ktiles * kRecordBytes);
    const std::vector<float> dense = Dense(m);
    for (int64_t mb = 0; mb < h.mp / 64; ++mb)
      for (int64_t kt = 0; kt < ktiles; ++kt) {
        const Smem rec(bytes.begin() + (mb * ktiles + kt) * kRecordBytes, bytes.begin() + (mb * ktiles + kt + 1) * kRecordBytes);
        for (int s = 0; s < 2; ++s) {
          const std::array<uint32_t, 128> e = ThreadMeta(rec, 0, s);
          for (int t = 0; t < 128; t += 4) EXPECT_TRUE(e[t] == e[t + 2] && e[t + 1] == e[t + 3]) << "thread pairs share words";
          static float a[64][32];
          sparseditto::seed_testing::DecodeSparseA<__half>(rec, ADesc(0, s), e, a);
          for (int r = 0; r < 64; ++r)
            for (int k = 0; k < 32; ++k) {
              const int64_t row = mb * 64 + r, col = kt * kBk + 32 * s + k;
              const float want = row < c.rows && col < c.cols ? dense[row * c.cols + col] : 0.0f;
              ASSERT_EQ(a[r][k], want) << "A[" << row << "][" << col << "]";
            }
        }
      }
  }
}

TEST(Nm24WgmmaSpBuild, RefusesANon24MatrixWithAReason) {
  Csr m;
  m.rows = 2, m.cols = 8;
  m.ci = {0, 1, 2, 5};
  m.v = {1, 1, 1, 1};
  m.ro = {0, 3, 4};
  Nm24WgHost h;
  std::string why;
  EXPECT_FALSE(BuildNm24Wg(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("not 2:4"), std::string::npos) << why;
  EXPECT_NE(why.find("columns 0..3 of row 0"), std::string::npos) << why;
  m.v = {1, 0, 1, 1};  // an explicit zero does not count
  EXPECT_TRUE(BuildNm24Wg(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why)) << why;
  m.ci[3] = 8;
  EXPECT_FALSE(BuildNm24Wg(m.rows, m.cols, m.ro.data(), m.ci.data(), m.v.data(), &h, &why));
  EXPECT_NE(why.find("out of range at entry 3"), std::string::npos) << why;
}

TEST(Nm24WgmmaSpLayout, DescriptorsAndOperandMaps) {
  const uint64_t a = ADesc(0x12200, 1), b = BDesc(0x4000, 1);
  EXPECT_EQ(Start(a), 0x12220u);
  EXPECT_EQ(Sbo(a), 512u);  // 8 rows of 64 bytes
  EXPECT_EQ(a >> 62, 2u);
  EXPECT_EQ((a >> 49) & 7, 0u);
  EXPECT_EQ(Start(b), 0x4000u + 32 * 128);
  EXPECT_EQ(Lbo(b), static_cast<uint32_t>(kBPieceBytes));
  EXPECT_EQ(Sbo(b), 1024u);
  EXPECT_EQ(b >> 62, 1u);
  std::set<int> a_bytes, b_bytes;
  for (int m = 0; m < 64; ++m)
    for (int c = 0; c < 32; ++c) {
      EXPECT_EQ(static_cast<uint32_t>(AImageOffset(m, c)), Swz64(m * 64 + 2 * c));
      a_bytes.insert(AImageOffset(m, c));
    }
  EXPECT_EQ(a_bytes.size(), 2048u);
  EXPECT_EQ(*a_bytes.rbegin(), kAImageBytes - 2);
  for (int k = 0; k < 64; ++k)
    for (int col = 0; col < 256; ++col) {
      EXPECT_EQ(static_cast<uint32_t>(BOffset(k, col)), (col / 64) * kBPieceBytes + Swz128(k * 128 + (col % 64) * 2));
      b_bytes.insert(BOffset(k, col));
    }
  EXPECT_EQ(b_bytes.size(), 64u * 256u);
  std::set<int> words;
  for (int t = 0; t < 128; ++t) words.insert(MetaThreadWord(t));
  EXPECT_EQ(words.size(), 64u);
  EXPECT_EQ(*words.rbegin() + 2, kMetaBytes / 4);
  EXPECT_EQ(kRecordBytes % 512, 0) << "records in a stage stay 512-byte aligned (64-byte swizzle atoms)";
  EXPECT_EQ(BigTile::kBBytes % 1024, 0);
  EXPECT_EQ(BigTile::kStageBytes % 1024, 0);
  EXPECT_EQ(SmallTile::kStageBytes % 1024, 0);
}

// StoreStaged's words land once each where its 16-byte row chunks read them.
template <class TL>
void ExpectStagedStoreIsTheTile() {
  std::set<int> words;
  std::vector<int> who(kBm * TL::kCRowBytes / 4, -1);
  for (int wg = 0; wg < 2; ++wg)
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < TL::kBn / 2; i += 2) {
        int r, cc;
        AccCoord(t, i, &r, &cc);
        const int at = CStageOffset<TL>(64 * wg + r, cc);
        ASSERT_EQ(at % 4, 0);
        EXPECT_TRUE(words.insert(at).second);
        who[at / 4] = (64 * wg + r) * 1000 + cc;
      }
  for (int r = 0; r < kBm; ++r)
    for (int ch = 0; ch < TL::kBn / 8; ++ch) {
      ASSERT_EQ(CStageOffset<TL>(r, ch * 8) % 16, 0);
      for (int w = 0; w < 4; ++w) ASSERT_EQ(who[CStageOffset<TL>(r, ch * 8) / 4 + w], r * 1000 + ch * 8 + 2 * w);
    }
}
TEST(Nm24WgmmaSpLayout, StagedStoreWritesWholeRows) {
  ExpectStagedStoreIsTheTile<BigTile>();
  ExpectStagedStoreIsTheTile<SmallTile>();
  ExpectStagedStoreIsTheTile<Tile<128, 3>>();
}

TEST(Nm24WgmmaSpReplay, SmallTile) {
  for (int64_t n : {1, 7, 40, 64}) ExpectReplayMatches<SmallTile>(7, 96, n, false);
  ExpectReplayMatches<SmallTile>(130, 200, 16, true);
  ExpectReplayMatches<SmallTile>(65, 36, 8, true);
}
TEST(Nm24WgmmaSpReplay, BigTile) {
  for (int64_t n : {65, 300}) ExpectReplayMatches<BigTile>(130, 200, n, false);
  for (int64_t n : {72, 304}) ExpectReplayMatches<BigTile>(130, 200, n, true);
  ExpectReplayMatches<BigTile>(1, 4, 257, false);
}
TEST(Nm24WgmmaSpReplay, OtherTunedTiles) {  // what the tunables can produce
  ExpectReplayMatches<Tile<128, 3>>(70, 150, 136, true);
  ExpectReplayMatches<Tile<128, 8>>(70, 150, 129, false);
  ExpectReplayMatches<Tile<256, 5>>(40, 64, 256, true);
}

// Split-K: K cut into clusters of ranks, each rank's partial parked and the cluster sum walked as
// ClusterReduce does, on awkward shapes (M, K off the tile multiples, empty rows, odd n) and every tile.
TEST(Nm24WgmmaSpReplay, SplitK) {
  // 300 x 520: K padded to 576, 9 K tiles: 2 a split -> 5 ranks (the last with 1), 3 -> 3, 5 -> 2, 1 -> 9.
  for (int per : {1, 2, 3, 5}) {
    for (int64_t n : {1, 7, 40}) ExpectReplayMatches<SmallTile>(300, 520, n, false, per);
    ExpectReplayMatches<SmallTile>(300, 520, 16, true, per);
  }
  for (int per : {2, 4}) {
    ExpectReplayMatches<MidTile>(130, 520, 130, false, per);
    ExpectReplayMatches<MidTile>(130, 520, 128, true, per);
    ExpectReplayMatches<BigTile>(70, 520, 257, false, per);
    ExpectReplayMatches<BigTile>(70, 520, 264, true, per);
    ExpectReplayMatches<Tile<128, 2>>(7, 300, 129, false, per);
  }
  ExpectReplayMatches<Tile<256, 3>>(1, 200, 3, false, 1);  // one row, 4 ranks of one K tile
}

// The search's rows with no nonzero (the builder leaves their records zero, metadata valid) under split-K.
TEST(Nm24WgmmaSpReplay, EmptyRowsUnderSplitK) {
  Csr m = RandomNmCsr(150, 260, 7);
  Csr e;  // rows 0..149 with every third row emptied
  e.rows = m.rows, e.cols = m.cols;
  for (int64_t r = 0; r < m.rows; ++r) {
    if (r % 3 != 0)
      for (int32_t x = m.ro[r]; x < m.ro[r + 1]; ++x) e.ci.push_back(m.ci[x]), e.v.push_back(m.v[x]);
    e.ro.push_back(static_cast<int32_t>(e.ci.size()));
  }
  const Nm24WgHost h = Build(e);
  std::mt19937 rng(5);
  const int64_t n = 72;
  std::vector<float> b(e.cols * n);
  for (float& x : b) x = Eighths(rng);
  const std::vector<float> c = Replay<MidTile>(h, b, n, true, 2), dense = Dense(e);
  for (int64_t r = 0; r < e.rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t k = 0; k < e.cols; ++k) want += double(dense[r * e.cols + k]) * b[k * n + j];
      ASSERT_EQ(c[r * n + j], static_cast<float>(want)) << "C[" << r << "][" << j << "]";
    }
}

// A device's Fit: `ctas` CTAs an SM; clusters of c CTAs resident at once as the occupancy API reports them,
// `gpc_loss` CTA slots short of the ideal sms * ctas / c (a cluster sits inside one GPC), none above `cluster`.
Fit MakeFit(int sms, int ctas, int cluster, int gpc_loss) {
  Fit fit;
  fit.ctas_per_sm = ctas;
  for (int c = 2; c <= SPLIT_MAX; ++c) fit.resident_clusters[c] = c <= cluster ? std::max(0, (sms * ctas - gpc_loss) / c) : 0;
  return fit;
}
// The least rounds of resident clusters x K share over every split count the rule may take (brute force).
double BestCost(int64_t tiles, int ktiles, int sms, const Fit& fit, int split_max) {
  double best = 1.0;
  for (int64_t s = 2; s <= std::min<int64_t>({split_max, SPLIT_MAX, ktiles}) && tiles * s <= static_cast<int64_t>(sms) * fit.ctas_per_sm; ++s) {
    const int per = static_cast<int>((ktiles + s - 1) / s), splits = (ktiles + per - 1) / per;
    if (fit.resident_clusters[splits] >= 1)
      best = std::min(best, static_cast<double>((tiles + fit.resident_clusters[splits] - 1) / fit.resident_clusters[splits]) / splits);
  }
  return best;
}

// MakePlan: splits fill the device at most once, never more than a resident cluster, SPLIT_MAX or the K
// tiles allow; every split has K tiles; 1 split when the tiles already fill the device; and the split count
// takes the least rounds of resident clusters x K share.
TEST(Nm24WgmmaSpPlan, SplitsFromTheDevice) {
  for (int sms : {1, 8, 78, 114, 132, 200})
    for (int ctas : {1, 2})
      for (int cluster : {1, 2, 4, 8})
        for (int gpc_loss : {0, 7, 24})
          for (int split_max : {1, 2, 4, 8})
            for (int64_t tiles : {1, 2, 3, 32, 33, 64, 86, 128, 512})
              for (int ktiles : {1, 2, 3, 9, 64, 172}) {
                const Fit fit = MakeFit(sms, ctas, cluster, gpc_loss);
                const Plan plan = MakePlan(tiles, ktiles, sms, fit, split_max);
                SCOPED_TRACE(::testing::Message() << sms << " SMs, " << ctas << " CTAs/SM, cluster " << cluster << ", loss " << gpc_loss
                                                  << ", max " << split_max << ", " << tiles << " tiles, " << ktiles << " K tiles");
                ASSERT_GE(plan.splits, 1);
                ASSERT_LE(plan.splits, std::min({cluster, split_max, ktiles}));
                ASSERT_GE(static_cast<int64_t>(plan.splits) * plan.kt_per_split, ktiles);
                int kt0, count;
                SplitTiles(plan.splits - 1, ktiles, plan.kt_per_split, &kt0, &count);
                ASSERT_GE(count, 1) << "the last split has K tiles";
                if (plan.splits > 1) ASSERT_LE(tiles * plan.splits, static_cast<int64_t>(sms) * ctas) << "one wave of CTAs";
                if (plan.splits > 1) ASSERT_GE(fit.resident_clusters[plan.splits], 1) << "a cluster of that size is resident";
                if (tiles >= static_cast<int64_t>(sms) * ctas) ASSERT_EQ(plan.splits, 1);
                const double cost = plan.splits == 1 ? 1.0
                    : static_cast<double>((tiles + fit.resident_clusters[plan.splits] - 1) / fit.resident_clusters[plan.splits]) / plan.splits;
                ASSERT_DOUBLE_EQ(cost, BestCost(tiles, ktiles, sms, fit, split_max));
              }
  // Session 12's H200 case: 4096 rows at n 128 (BN 128: 32 tiles), 64 K tiles, 132 SMs, 2 CTAs an SM. The
  // CTA count allows 8 splits (256 CTAs), but only 30 clusters of 8 are resident (ncu, session 13): 8 splits
  // run the 32 clusters in two rounds (cost 2/8), 7 splits (10 K tiles each) in one when 32 clusters of 7 fit
  // (the other sizes' counts here are illustrative, not measured).
  Fit h200;
  h200.ctas_per_sm = 2;
  const int resident[SPLIT_MAX + 1] = {0, 0, 128, 84, 64, 50, 42, 36, 30};
  for (int c = 2; c <= SPLIT_MAX; ++c) h200.resident_clusters[c] = resident[c];
  const Plan p = MakePlan(32, 64, 132, h200, 8);
  EXPECT_EQ(p.splits, 7);
  EXPECT_EQ(p.kt_per_split, 10);
  // With every cluster size resident in full, the CTA count decides: 8 splits of 8 K tiles.
  const Plan q = MakePlan(32, 64, 132, MakeFit(132, 2, 8, 0), 8);
  EXPECT_EQ(q.splits, 8);
  EXPECT_EQ(q.kt_per_split, 8);
}

// The WS pipeline's bookkeeping (PipeStage, PipeFullParity, PipeEmptyParity, PipeReleaseAfter,
// kEmptyArrivals) run by a model of mbarriers (phase, pending arrivals, transaction bytes; try_wait.parity
// passes once the phase of that parity completed) under random interleavings of the producer lane, the
// copy engine landing stages late, and the 8 consumer warps (each arriving with its 32 threads). Checks: a consumer reads the stage of tile j
// only once tile j landed there, and nothing lands in a stage a consumer still reads (from its "full" wait
// until its wgmma retired: at its own wait_group 0, or with a group in flight at the next tile's
// wait_group 1 or the final wait); every warp consumes every tile; nothing deadlocks.
struct MbarModel {
  int expected = 1, pending = 1, tx = 0, phase = 0;
  void Complete() { if (pending == 0 && tx == 0) ++phase, pending = expected; }
  void Arrive() { EXPECT_GT(pending, 0); --pending; Complete(); }
  void ExpectTx(int bytes) { tx += bytes; --pending; Complete(); }
  void Land(int bytes) { tx -= bytes; Complete(); }
  bool Passed(uint32_t parity) const { return static_cast<uint32_t>(phase & 1) != parity; }
};
void SimulatePipeline(int stages, int count, bool inflight, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << stages << " stages, " << count << " K tiles, inflight " << inflight << ", seed " << seed);
  std::mt19937 rng(seed);
  std::vector<MbarModel> full(stages), empty(stages);
  for (MbarModel& e : empty) e.expected = e.pending = kEmptyArrivals;
  std::vector<int> content(stages, -1);                 // tile a stage holds (-1: none yet)
  std::vector<std::set<int>> readers(stages);            // warps whose wgmma may still read the stage
  std::vector<int> landing;                              // tiles issued, not yet landed
  int pj = 0;                                            // producer's next tile
  struct Warp { int j = 0; bool waiting = true; int held = -1; };  // held: tile whose wgmma is in flight (inflight)
  std::vector<Warp> warps(kConsumerWarps);
  int finished = 0;
  for (int step = 0; step < 200000 && finished < kConsumerWarps; ++step) {
    const int who = static_cast<int>(rng() % (kConsumerWarps + 2));
    if (who == kConsumerWarps) {  // the producer lane
      if (pj >= count) continue;
      if (pj >= stages && !empty[PipeStage(pj, stages)].Passed(PipeEmptyParity(pj, stages))) continue;
      full[PipeStage(pj, stages)].ExpectTx(2 * kRecordBytes + kBPieceBytes);
      landing.push_back(pj++);
    } else if (who == kConsumerWarps + 1) {  // the copy engine lands one issued tile
      if (landing.empty()) continue;
      const size_t pick = rng() % landing.size();
      const int j = landing[pick];
      landing.erase(landing.begin() + pick);
      const int st = PipeStage(j, stages);
      ASSERT_TRUE(readers[st].empty()) << "tile " << j << " lands in stage " << st << " while a wgmma reads it";
      content[st] = j;
      full[st].Land(2 * kRecordBytes + kBPieceBytes);
    } else {
      Warp& w = warps[who];
      if (w.j >= count) continue;
      const int st = PipeStage(w.j, stages);
      if (!full[st].Passed(PipeFullParity(w.j, stages))) continue;
      ASSERT_EQ(content[st], w.j) << "warp " << who << " reads stage " << st;
      readers[st].insert(who);
      // wait_group: with a group in flight the previous tile's wgmma retires now, else this one's.
      const int retired = inflight ? w.held : w.j;
      if (retired >= 0) readers[PipeStage(retired, stages)].erase(who);
      w.held = inflight ? w.j : -1;
      const int done = PipeReleaseAfter(w.j, inflight);
      if (done >= 0) for (int lane = 0; lane < 32; ++lane) empty[PipeStage(done, stages)].Arrive();
      if (++w.j == count) {
        if (w.held >= 0) readers[PipeStage(w.held, stages)].erase(who);  // the final wait_group 0
        ++finished;
      }
    }
  }
  ASSERT_EQ(finished, kConsumerWarps) << "deadlock or starvation";
  ASSERT_EQ(pj, count);
}
TEST(Nm24WgmmaSpPipeline, FullEmptyBookkeeping) {
  for (int stages : {2, 3, 4, 5, 6, 8})
    for (int count : {1, 2, 3, 7, 16, 33})
      for (bool inflight : {false, true})
        for (uint32_t seed = 1; seed <= 6; ++seed) SimulatePipeline(stages, count, inflight, seed * 7919 + stages * 31 + count);
}
// A broken parity is caught: the model is not vacuous.
TEST(Nm24WgmmaSpPipeline, TheModelCatchesAWrongParity) {
  MbarModel m;
  EXPECT_FALSE(m.Passed(0));  // phase 0 in progress
  m.ExpectTx(16);
  EXPECT_FALSE(m.Passed(0));  // bytes outstanding
  m.Land(16);
  EXPECT_TRUE(m.Passed(0));
  EXPECT_FALSE(m.Passed(1));
  for (int j = 0; j < 8; ++j) EXPECT_EQ(PipeFullParity(j, 4), j < 4 ? 0u : 1u);
  for (int j = 4; j < 12; ++j) EXPECT_EQ(PipeEmptyParity(j, 4), j < 8 ? 0u : 1u);
}

// Shared memory a CTA, and CTAs an SM by shared memory (sm_90: 228 KB an SM, 1 KB reserved a CTA).
TEST(Nm24WgmmaSpLayout, SharedMemoryOfEachTile) {
  auto row = [](const char* name, int bn, int stages, int smem, int min_ctas) {
    std::printf("  tile %-5s BN %3d STAGES %d: %6d bytes (%.1f KB) a CTA, %d CTA(s) an SM by shared memory\n", name, bn, stages, smem, smem / 1024.0, min_ctas);
  };
#define SD_ROW(BN_, S_) row(#BN_ "/" #S_, BN_, S_, Tile<BN_, S_>::kSmemBytes, Tile<BN_, S_>::kMinCtas)
  SD_ROW(64, 4); SD_ROW(64, 6); SD_ROW(64, 8);
  SD_ROW(128, 2); SD_ROW(128, 3); SD_ROW(128, 4); SD_ROW(128, 5);
  SD_ROW(256, 2); SD_ROW(256, 3); SD_ROW(256, 4); SD_ROW(256, 5);
#undef SD_ROW
  EXPECT_EQ((Tile<128, 3>::kMinCtas), 2);
  EXPECT_EQ((Tile<128, 4>::kMinCtas), 2);
  EXPECT_EQ((Tile<256, 4>::kMinCtas), 1);
  EXPECT_GE((Tile<256, 3>::kDataBytes), (Tile<256, 3>::kPartialBytes)) << "the partial tile has room";
}

TEST(Nm24WgmmaSpSeed, TunablesAndSeedLine) {
  std::ifstream in(SPARSEDITTO_SOURCE_DIR "/kernels/seeds/nm24_wgmma_sp.cu");
  std::stringstream text;
  text << in.rdbuf();
  const std::string source = text.str();
  ASSERT_FALSE(source.empty());
  EXPECT_NE(source.find("// sparseditto:seed families=[n_m] nm=[2:4] dtypes=[fp16, bf16] archs=[sm_90a]"), std::string::npos);
  auto tunables = sparseditto::ParseTunables(source);
  ASSERT_TRUE(tunables.ok()) << tunables.status();
  std::map<std::string, std::string> got;
  for (const auto& t : *tunables) got[t.name()] = t.value();
  const std::map<std::string, std::string> want = {{"BN", std::to_string(BN)}, {"STAGES", std::to_string(STAGES)},
                                                   {"SMALL_STAGES", std::to_string(SMALL_STAGES)}, {"SMALL_N_MAX", std::to_string(SMALL_N_MAX)},
                                                   {"MID_STAGES", std::to_string(MID_STAGES)}, {"MID_N_MAX", std::to_string(MID_N_MAX)},
                                                   {"WS", std::to_string(WS)}, {"MMA_INFLIGHT", std::to_string(MMA_INFLIGHT)},
                                                   {"SPLIT_MAX", std::to_string(SPLIT_MAX)}};
  EXPECT_EQ(got, want);
  // Every listed value satisfies the tile's static_asserts (instantiated here): shared memory, C staging.
  static_assert(Tile<128, 2>::kSmemBytes > 0 && Tile<128, 3>::kSmemBytes > 0 && Tile<128, 5>::kSmemBytes > 0 && Tile<256, 2>::kSmemBytes > 0 &&
                Tile<256, 3>::kSmemBytes > 0 && Tile<256, 5>::kSmemBytes > 0 && Tile<64, 4>::kSmemBytes > 0 && Tile<64, 8>::kSmemBytes > 0,
                "listed values fit");
}

}  // namespace
