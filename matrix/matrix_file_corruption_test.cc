// Hostile inputs for the matrix readers: thousands of seeded random corruptions of real DLMC files
// (and of .mtx / .npy files made from them); the hand-written malformed files are in
// matrix_file_test.cc. Every outcome must be OK with a valid matrix, or an
// error that starts with the file's name; never a crash, never an allocation out of proportion to
// the file. Run once under -DSPARSEDITTO_SANITIZE=ON for ASan/UBSan.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "common/rng.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "matrix/testing/largest_allocation.h"
#include "matrix/testing/npy_bytes.h"
#include "matrix/matrix_file.h"

namespace sparseditto {
namespace {

using ::testing::StartsWith;
using Parser = std::function<absl::StatusOr<CsrMatrix>(std::string_view, const std::string&)>;

std::string DlmcPath(const std::string& sparsity, const std::string& layer) {
  return fmt::format("{}/dlmc/transformer/magnitude_pruning/{}/body_{}_fully_connected.smtx", SPARSEDITTO_DATA_DIR,
                     sparsity, layer);
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

using testing::Bytes;
using testing::NpyDict;
using testing::NpyFile;

// ---------- random corruptions of real files ----------

CsrMatrix DlmcMatrix(const std::string& path) {
  absl::StatusOr<CsrMatrix> m = ParseSmtx(ReadFileBytes(path), path);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *std::move(m) : CsrMatrix{};
}

// A nonzero, non-round value for entry (row, col), so the text holds numbers of several shapes.
double SomeValue(int64_t row, int64_t col) { return ((row * 31 + col * 17) % 19 - 9.5) / 8.0; }

// The first `rows` rows of `m` as MatrixMarket, entries in reverse order. Symmetric kinds keep the
// lower triangle of the leading rows x rows block (strictly lower for skew-symmetric).
std::string ToMatrixMarket(const CsrMatrix& m, int64_t rows, std::string_view field, std::string_view symmetry) {
  const bool general = symmetry == "general";
  std::vector<std::string> lines;
  for (int64_t r = 0; r < rows; ++r) {
    for (int32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      const int64_t c = m.col_indices[k];
      if (!general && (c > r || (c == r && symmetry == "skew-symmetric"))) continue;
      std::string line = fmt::format("{} {}", r + 1, c + 1);
      if (field == "real") line += fmt::format(" {:.6g}", SomeValue(r, c));
      if (field == "integer") line += fmt::format(" {}", (r + c) % 7 - 3);
      lines.push_back(line + "\n");
    }
  }
  std::string out = fmt::format("%%MatrixMarket matrix coordinate {} {}\n% made from a DLMC file\n{} {} {}\n",
                                field, symmetry, rows, general ? m.cols : rows, lines.size());
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) out += *it;
  return out;
}

// The first `rows` rows of `m` as a dense .npy.
std::string ToNpy(const CsrMatrix& m, int64_t rows, std::string_view descr, bool fortran_order, int version) {
  std::vector<double> dense(rows * m.cols, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int32_t k = m.row_offsets[r]; k < m.row_offsets[r + 1]; ++k) {
      dense[r * m.cols + m.col_indices[k]] = SomeValue(r, m.col_indices[k]);
    }
  }
  std::string data;
  for (int64_t o = 0; o < (fortran_order ? m.cols : rows); ++o) {
    for (int64_t i = 0; i < (fortran_order ? rows : m.cols); ++i) {
      const double v = fortran_order ? dense[i * m.cols + o] : dense[o * m.cols + i];
      if (descr == "<f8") data += Bytes<double>({v});
      if (descr == "<f4") data += Bytes<float>({static_cast<float>(v)});
      if (descr == "<f2") data += Bytes<uint16_t>({FloatToHalfBits(static_cast<float>(v))});
    }
  }
  return NpyFile(NpyDict(descr, fortran_order, rows, m.cols), data, version);
}

// Applies 1 to 3 random corruptions, each logged for the failure message.
class Corrupter {
 public:
  explicit Corrupter(uint64_t seed) : rng_(seed) {}

  std::string Corrupt(std::string s, std::string* log) {
    const int count = 1 + static_cast<int>(rng_.Below(3));
    for (int i = 0; i < count && !s.empty(); ++i) CorruptOnce(s, log);
    return s;
  }

 private:
  static bool IsSeparator(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == ','; }
  static bool IsDigit(char c) { return c >= '0' && c <= '9'; }

  // A position, one time in three within the first 128 bytes, where the headers are.
  size_t Position(const std::string& s) {
    return rng_.Below(rng_.Below(3) == 0 ? std::min<size_t>(s.size(), 128) : s.size());
  }
  std::string_view Pick(const std::vector<std::string_view>& choices) { return choices[rng_.Below(choices.size())]; }

  std::string Number() {
    static const std::vector<std::string_view> kNumbers = {
        "0", "1", "-1", "-0", "+1", "2147483647", "2147483648", "4294967295", "4294967296", "16777216", "16777217",
        "9223372036854775807", "9223372036854775808", "18446744073709551616", "99999999999999999999999999",
        "1000000000000", "-2147483648", "1e308", "1e-320", "nan", "inf", "0x10", "1.5", "", "00000000000000000007"};
    if (rng_.Below(3) == 0) return std::to_string(rng_.Below(uint64_t{1} << (1 + rng_.Below(40))));
    return std::string(Pick(kNumbers));
  }

  // [begin, end) of the token around position p (or after it, if p is a separator).
  std::pair<size_t, size_t> TokenAt(const std::string& s, size_t p) {
    while (p < s.size() && IsSeparator(s[p])) ++p;
    size_t begin = p, end = p;
    while (begin > 0 && !IsSeparator(s[begin - 1])) --begin;
    while (end < s.size() && !IsSeparator(s[end])) ++end;
    return {begin, end};
  }

  void CorruptOnce(std::string& s, std::string* log) {
    const size_t p = Position(s);
    switch (rng_.Below(9)) {
      case 0:
        *log += fmt::format("truncate at {}; ", p);
        s.resize(p);
        break;
      case 1: {
        const char byte = static_cast<char>(rng_.Below(256));
        *log += fmt::format("byte {} = {:#04x}; ", p, static_cast<unsigned char>(byte));
        s[p] = byte;
        break;
      }
      case 2: {
        static const std::vector<std::string_view> kBytes = {"0", "9", " ", "\n", ",", "-", ".", "%", "\r", "'", "("};
        const std::string bytes(rng_.Below(2) ? Pick(kBytes) : std::string(1, static_cast<char>(rng_.Below(256))));
        *log += fmt::format("insert {} at {}; ", QuoteForLog(bytes), p);
        s.insert(p, bytes);
        break;
      }
      case 3: {
        const size_t length = 1 + rng_.Below(rng_.Below(4) == 0 ? 4096 : 16);
        *log += fmt::format("delete {} bytes at {}; ", length, p);
        s.erase(p, length);
        break;
      }
      case 4:
      case 5: {  // replace a number with a hostile one
        size_t begin = p;
        while (begin < s.size() && !IsDigit(s[begin])) ++begin;
        if (begin == s.size()) break;
        size_t end = begin;
        while (begin > 0 && IsDigit(s[begin - 1])) --begin;
        while (end < s.size() && IsDigit(s[end])) ++end;
        const std::string number = Number();
        *log += fmt::format("number at {} = {}; ", begin, QuoteForLog(number));
        s.replace(begin, end - begin, number);
        break;
      }
      case 6: {  // swap two tokens
        auto a = TokenAt(s, p), b = TokenAt(s, Position(s));
        if (a.first > b.first) std::swap(a, b);
        if (a.second > b.first || b.first == b.second) break;
        *log += fmt::format("swap tokens at {} and {}; ", a.first, b.first);
        const std::string first = s.substr(a.first, a.second - a.first);
        const std::string second = s.substr(b.first, b.second - b.first);
        s.replace(b.first, b.second - b.first, first);
        s.replace(a.first, a.second - a.first, second);
        break;
      }
      case 7: {  // delete or duplicate the line around p
        const size_t begin = p == 0 ? 0 : s.rfind('\n', p - 1) + 1;
        const size_t newline = s.find('\n', p);
        const size_t end = newline == std::string::npos ? s.size() : newline + 1;
        const bool duplicate = rng_.Below(2) == 0;
        *log += fmt::format("{} line at {}; ", duplicate ? "duplicate" : "delete", begin);
        if (duplicate) s.insert(begin, s.substr(begin, end - begin));
        else s.erase(begin, end - begin);
        break;
      }
      default: {  // overwrite with a binary word: NaN, Inf, all ones, zero
        static const std::vector<uint64_t> kWords = {0x7fc00000, 0x7f800000, 0xff800000, 0x7e00, 0x7c00,
                                                     0x7ff8000000000000, 0xffffffffffffffff, 0};
        const uint64_t word = kWords[rng_.Below(kWords.size())];
        const size_t width = size_t{1} << rng_.Below(4);
        *log += fmt::format("write {:#x} ({} bytes) at {}; ", word, width, p);
        for (size_t i = 0; i < width && p + i < s.size(); ++i) s[p + i] = static_cast<char>(word >> (8 * i));
        break;
      }
    }
  }

  static std::string QuoteForLog(const std::string& bytes) { return fmt::format("{:?}", bytes); }

  Rng rng_;
};

// Corrupts `source` `iterations` times and checks every outcome (see the top of this file).
void CorruptAndParse(const std::string& name, const std::string& source, const Parser& parse, int iterations,
                     uint64_t seed) {
  ASSERT_TRUE(parse(source, name).ok()) << parse(source, name).status();
  int ok = 0;
  size_t largest_seen = 0;
  for (int i = 0; i < iterations; ++i) {
    const uint64_t case_seed = seed * 1000003 + i;
    std::string log;
    const std::string corrupted = Corrupter(case_seed).Corrupt(source, &log);
    testing::ResetLargestAllocation();
    const absl::StatusOr<CsrMatrix> m = parse(corrupted, name);
    const size_t largest = testing::LargestAllocation();
    largest_seen = std::max(largest_seen, largest);
    const auto where = [&] { return fmt::format("{} case {} (seed {}): {}", name, i, case_seed, log); };
    // Allowed: a small multiple of the file, or the row offsets of the largest legal empty matrix.
    ASSERT_LE(largest, 16 * corrupted.size() + 4 * (kMaxMatrixDim + 1) + 4096) << where();
    if (m.ok()) {
      const absl::Status valid = ValidateCsr(*m, name);
      ASSERT_TRUE(valid.ok()) << where() << ": " << valid;
      ++ok;
    } else {
      const std::string message(m.status().message());
      ASSERT_THAT(message, StartsWith(name + ": ")) << where();
      ASSERT_LT(message.size(), 400u) << where() << ": " << message;
    }
  }
  fmt::print("{}: {} corruptions, {} still parsed, largest allocation {} bytes for a {}-byte file\n", name,
             iterations, ok, largest_seen, source.size());
  EXPECT_LT(ok, iterations / 2) << "most corruptions should be caught";
}


TEST(MatrixFileCorruptionTest, SmtxFromDlmc) {
  const struct {
    const char* sparsity;
    const char* layer;
    int iterations;
  } kFiles[] = {
      {"0.98", "encoder_layer_0_self_attention_multihead_attention_q", 10000},
      {"0.95", "encoder_layer_0_self_attention_multihead_attention_output_transform", 6000},
      {"0.98", "decoder_layer_0_ffn_conv1", 3000},
      {"0.9", "encoder_layer_0_ffn_conv2", 500},
  };
  uint64_t seed = 1;
  for (const auto& file : kFiles) {
    const std::string path = DlmcPath(file.sparsity, file.layer);
    const std::string bytes = ReadFileBytes(path);
    ASSERT_FALSE(bytes.empty()) << path << " (data/dlmc is part of the checkout)";
    CorruptAndParse(path, bytes, ParseSmtx, file.iterations, seed++);
  }
}

TEST(MatrixFileCorruptionTest, MatrixMarketFromDlmc) {
  const CsrMatrix m = DlmcMatrix(DlmcPath("0.95", "encoder_layer_0_self_attention_multihead_attention_q"));
  CorruptAndParse("general.mtx", ToMatrixMarket(m, 64, "real", "general"), ParseMatrixMarket, 5000, 101);
  CorruptAndParse("symmetric.mtx", ToMatrixMarket(m, 256, "pattern", "symmetric"), ParseMatrixMarket, 4000, 102);
  CorruptAndParse("skew.mtx", ToMatrixMarket(m, 192, "integer", "skew-symmetric"), ParseMatrixMarket, 4000, 103);
}

TEST(MatrixFileCorruptionTest, NpyFromDlmc) {
  const CsrMatrix m = DlmcMatrix(DlmcPath("0.9", "encoder_layer_0_self_attention_multihead_attention_q"));
  CorruptAndParse("c_order.npy", ToNpy(m, 16, "<f4", false, 1), ParseNpy, 5000, 201);
  CorruptAndParse("fortran.npy", ToNpy(m, 32, "<f2", true, 2), ParseNpy, 4000, 202);
  CorruptAndParse("double.npy", ToNpy(m, 8, "<f8", false, 3), ParseNpy, 4000, 203);
}

}  // namespace
}  // namespace sparseditto
