#include "matrix/matrix_file.h"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/dtype.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/testing/temp_folder.h"
#include "matrix/testing/npy_bytes.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---------- helpers ----------

using testing::Bytes;
using testing::NpyDict;
using testing::NpyFile;

// `values` (row-major) as a .npy of `descr`, stored in the order `fortran_order` asks.
std::string NpyBytes(const std::vector<double>& values, int64_t rows, int64_t cols, std::string_view descr,
                     bool fortran_order = false, int major_version = 1) {
  std::string data;
  for (int64_t o = 0; o < (fortran_order ? cols : rows); ++o) {
    for (int64_t i = 0; i < (fortran_order ? rows : cols); ++i) {
      const double v = fortran_order ? values[i * cols + o] : values[o * cols + i];
      if (descr == "<f8") data += Bytes<double>({v});
      if (descr == "<f4") data += Bytes<float>({static_cast<float>(v)});
      if (descr == "<f2") data += Bytes<uint16_t>({FloatToHalfBits(static_cast<float>(v))});
    }
  }
  return NpyFile(NpyDict(descr, fortran_order, rows, cols), data, major_version);
}

std::string WriteTempFile(const std::string& file_name, const std::string& contents) {
  const std::string path = ::sparseditto::testing_support::ProcessTempDir() + "/" + file_name;
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

std::string ReadFileBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string DataDir() { return SPARSEDITTO_DATA_DIR; }

// ---------- good inputs ----------

struct GoodCase {
  std::string label;
  std::string contents;
  int64_t rows, cols;
  std::vector<int32_t> row_offsets;
  std::vector<int32_t> col_indices;
  std::vector<float> values;  // empty where the format has none
};

void ExpectMatrix(const absl::StatusOr<CsrMatrix>& m, const GoodCase& c) {
  ASSERT_TRUE(m.ok()) << c.label << ": " << m.status();
  EXPECT_TRUE(ValidateCsr(*m, c.label).ok()) << ValidateCsr(*m, c.label);
  EXPECT_EQ(m->rows, c.rows) << c.label;
  EXPECT_EQ(m->cols, c.cols) << c.label;
  EXPECT_EQ(m->row_offsets, c.row_offsets) << c.label;
  EXPECT_EQ(m->col_indices, c.col_indices) << c.label;
  EXPECT_EQ(m->values, c.values) << c.label;
}

TEST(ParseSmtxTest, GoodInputs) {
  const std::vector<GoodCase> cases = {
      {"dlmc style", "3, 4, 4\n0 2 2 4 \n1 3 0 2 \n", 3, 4, {0, 2, 2, 4}, {1, 3, 0, 2}, {}},
      {"no trailing newline", "2, 2, 1\n0 0 1\n1", 2, 2, {0, 0, 1}, {1}, {}},
      {"crlf and tabs", "2,2,2\r\n0\t1\t2\r\n0\t1\r\n", 2, 2, {0, 1, 2}, {0, 1}, {}},
      {"all rows empty", "3, 5, 0\n0 0 0 0\n\n", 3, 5, {0, 0, 0, 0}, {}, {}},
      {"no third line when empty", "1, 1, 0\n0 0\n", 1, 1, {0, 0}, {}, {}},
      {"zero by zero", "0, 0, 0\n0\n", 0, 0, {0}, {}, {}},
      {"blank lines after", "1, 3, 3\n0 3\n0 1 2\n\n  \n", 1, 3, {0, 3}, {0, 1, 2}, {}},
  };
  for (const GoodCase& c : cases) ExpectMatrix(ParseSmtx(c.contents, c.label), c);
}

TEST(ParseMatrixMarketTest, GoodInputs) {
  const std::vector<GoodCase> cases = {
      {"real general, any order",
       "%%MatrixMarket matrix coordinate real general\n% a comment\n%\n3 4 3\n3 1 -2.5\n1 4 1e-3\n1 2 +7\n", 3, 4,
       {0, 2, 2, 3}, {1, 3, 0}, {7.0f, 1e-3f, -2.5f}},
      {"integer, banner in capitals, blank lines",
       "%%MATRIXMARKET Matrix Coordinate Integer General\n\n2 2 2\n\n2 2 -3\n1 1 4\n\n", 2, 2, {0, 1, 2}, {0, 1},
       {4.0f, -3.0f}},
      {"pattern", "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n2 3\n1 1\n", 2, 3, {0, 1, 2}, {0, 2}, {}},
      {"symmetric mirrors off-diagonal",
       "%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 1.5\n3 1 2\n3 2 -1\n", 3, 3, {0, 2, 3, 5},
       {0, 2, 2, 0, 1}, {1.5f, 2.0f, -1.0f, 2.0f, -1.0f}},
      {"skew-symmetric negates the mirror", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 1 3\n", 2,
       2, {0, 1, 2}, {1, 0}, {-3.0f, 3.0f}},
      {"symmetric pattern", "%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n", 2, 2, {0, 2, 3},
       {0, 1, 0}, {}},
      {"explicit zero kept", "%%MatrixMarket matrix coordinate real general\n1 2 1\n1 2 0\n", 1, 2, {0, 1}, {1},
       {0.0f}},
      {"no entries", "%%MatrixMarket matrix coordinate real general\n4 4 0\n", 4, 4, {0, 0, 0, 0, 0}, {}, {}},
  };
  for (const GoodCase& c : cases) ExpectMatrix(ParseMatrixMarket(c.contents, c.label), c);
}

TEST(ParseNpyTest, GoodInputs) {
  // 2x3, row-major: [[0, 1.5, 0], [-2, 0, 0.25]]; zeros are not stored.
  const std::vector<double> v = {0, 1.5, 0, -2, 0, 0.25};
  const std::vector<int32_t> offsets = {0, 1, 3}, cols = {1, 0, 2};
  const std::vector<float> values = {1.5f, -2.0f, 0.25f};
  const std::vector<GoodCase> cases = {
      {"f4 C order", NpyBytes(v, 2, 3, "<f4"), 2, 3, offsets, cols, values},
      {"f4 Fortran order", NpyBytes(v, 2, 3, "<f4", true), 2, 3, offsets, cols, values},
      {"f2", NpyBytes(v, 2, 3, "<f2"), 2, 3, offsets, cols, values},
      {"f8 Fortran order", NpyBytes(v, 2, 3, "<f8", true), 2, 3, offsets, cols, values},
      {"version 2.0", NpyBytes(v, 2, 3, "<f4", false, 2), 2, 3, offsets, cols, values},
      {"version 3.0", NpyBytes(v, 2, 3, "<f4", true, 3), 2, 3, offsets, cols, values},
      {"all zeros", NpyBytes({0, 0, 0, 0}, 2, 2, "<f4"), 2, 2, {0, 0, 0}, {}, {}},
      {"no columns", NpyBytes({}, 3, 0, "<f4"), 3, 0, {0, 0, 0, 0}, {}, {}},
      {"f8 keeps fp32 precision", NpyBytes({0.1}, 1, 1, "<f8"), 1, 1, {0, 1}, {0}, {0.1f}},
  };
  for (const GoodCase& c : cases) ExpectMatrix(ParseNpy(c.contents, c.label), c);
}

TEST(ParseNpyTest, AcceptsHeaderWithoutTrailingCommaAndDoubleQuotes) {
  const std::string bytes = NpyBytes({2.0}, 1, 1, "<f4");
  const std::string dict = "{\"shape\": (1, 1), \"fortran_order\": False, \"descr\": \"<f4\"}";
  const std::string header = dict + std::string(128 - 10 - dict.size() - 1, ' ') + "\n";
  const std::string out = bytes.substr(0, 8) + std::string(1, static_cast<char>(header.size())) + std::string(1, '\0') +
                    header + bytes.substr(bytes.size() - 4);
  absl::StatusOr<CsrMatrix> m = ParseNpy(out, "reordered.npy");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->values, std::vector<float>{2.0f});
}

// ---------- the DLMC files ----------

struct DlmcEntry {
  std::string path;  // relative to the data dir
  int64_t rows, cols, nnz;
};

std::vector<DlmcEntry> ReadDlmcIndex() {
  std::ifstream csv(DataDir() + "/dlmc/dlmc_subset.csv");
  std::vector<DlmcEntry> entries;
  std::string line;
  std::getline(csv, line);  // column names
  while (std::getline(csv, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    for (std::string field; std::getline(ss, field, ',');) fields.push_back(field);
    if (fields.size() < 7) continue;
    entries.push_back({fields[2], std::stoll(fields[4]), std::stoll(fields[5]),
                       static_cast<int64_t>(std::stod(fields[6]))});
  }
  return entries;
}

TEST(ReadMatrixFileTest, AllDlmcFilesMatchTheIndex) {
  ASSERT_TRUE(std::filesystem::exists(DataDir() + "/dlmc/dlmc_subset.csv")) << "data/dlmc is part of the checkout";
  const std::vector<DlmcEntry> entries = ReadDlmcIndex();
  ASSERT_EQ(entries.size(), 36u);
  for (const DlmcEntry& e : entries) {
    const std::string path = DataDir() + "/" + e.path;
    absl::StatusOr<CsrMatrix> m = ReadMatrixFile(path, v1::DTYPE_FP16, 7);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(m->rows, e.rows) << path;
    EXPECT_EQ(m->cols, e.cols) << path;
    EXPECT_EQ(m->nnz(), e.nnz) << path;
    ASSERT_EQ(m->values.size(), m->col_indices.size()) << path;
    for (float value : m->values) {
      ASSERT_NE(value, 0.0f) << path;
      ASSERT_EQ(value, RoundToDtype(value, v1::DTYPE_FP16)) << path;
    }
    EXPECT_TRUE(ValidateCsr(*m, path).ok()) << ValidateCsr(*m, path);
  }
}

TEST(ReadMatrixFileTest, SmtxValuesAreSeeded) {
  const std::string path = WriteTempFile("seeded.smtx", "2, 3, 3\n0 2 3\n0 2 1\n");
  absl::StatusOr<CsrMatrix> a = ReadMatrixFile(path, v1::DTYPE_BF16, 11);
  absl::StatusOr<CsrMatrix> b = ReadMatrixFile(path, v1::DTYPE_BF16, 11);
  absl::StatusOr<CsrMatrix> c = ReadMatrixFile(path, v1::DTYPE_BF16, 12);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status() << b.status() << c.status();
  EXPECT_EQ(a->values.size(), 3u);
  EXPECT_EQ(a->values, b->values);
  EXPECT_NE(a->values, c->values);
}

TEST(ReadMatrixFileTest, FileValuesAreRoundedToTheDtype) {
  const std::string path =
      WriteTempFile("round.mtx", "%%MatrixMarket matrix coordinate real general\n1 2 2\n1 1 0.1\n1 2 3.14159\n");
  absl::StatusOr<CsrMatrix> m = ReadMatrixFile(path, v1::DTYPE_FP16, 0);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->values,
            (std::vector<float>{RoundToDtype(0.1f, v1::DTYPE_FP16), RoundToDtype(3.14159f, v1::DTYPE_FP16)}));
  const std::string npy = WriteTempFile("round.NPY", NpyBytes({0.1, 0}, 1, 2, "<f4"));
  m = ReadMatrixFile(npy, v1::DTYPE_BF16, 0);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->values, std::vector<float>{RoundToDtype(0.1f, v1::DTYPE_BF16)});
}

TEST(ReadMatrixFileTest, Errors) {
  const std::string big = WriteTempFile("big.mtx", "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e5\n");
  struct Case {
    std::string path;
    v1::Dtype dtype;
    absl::StatusCode code;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"/nonexistent/a.smtx", v1::DTYPE_FP32, absl::StatusCode::kNotFound, "no such file"},
      {WriteTempFile("a.txt", "x"), v1::DTYPE_FP32, absl::StatusCode::kInvalidArgument,
       "unknown matrix file extension"},
      {::sparseditto::testing_support::ProcessTempDir() + "/dir.smtx", v1::DTYPE_FP32, absl::StatusCode::kInvalidArgument, "not a regular file"},
      {big, v1::DTYPE_FP16, absl::StatusCode::kInvalidArgument, "overflows fp16"},
      {big, v1::DTYPE_UNSPECIFIED, absl::StatusCode::kInvalidArgument, "no dtype"},
  };
  std::filesystem::create_directories(::sparseditto::testing_support::ProcessTempDir() + "/dir.smtx");
  for (const Case& c : cases) {
    absl::StatusOr<CsrMatrix> m = ReadMatrixFile(c.path, c.dtype, 0);
    ASSERT_FALSE(m.ok()) << c.path;
    EXPECT_EQ(m.status().code(), c.code) << m.status();
    EXPECT_THAT(std::string(m.status().message()), StartsWith(c.path + ": "));
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(c.expected));
  }
  EXPECT_TRUE(ReadMatrixFile(big, v1::DTYPE_FP32, 0).ok());
}

TEST(ReadMatrixFileTest, TruncatedDlmcFileSaysTruncated) {
  const std::string source =
      DataDir() + "/dlmc/transformer/magnitude_pruning/0.9/body_encoder_layer_0_ffn_conv1_fully_connected.smtx";
  ASSERT_TRUE(std::filesystem::exists(source)) << source;
  const std::string contents = ReadFileBytes(source);
  struct Case {
    size_t keep_bytes;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {contents.size() * 3 / 4, {"line 3: expected 104857 column indices, found", "(file truncated?)"}},
      {5000, {"line 1: header declares 2048 rows and 104857 nonzeros", "(file truncated?)"}},
      {10, {"line 1:", "(file truncated?)"}},
  };
  for (const Case& c : cases) {
    const std::string path = WriteTempFile("truncated.smtx", contents.substr(0, c.keep_bytes));
    absl::StatusOr<CsrMatrix> m = ReadMatrixFile(path, v1::DTYPE_FP32, 0);
    ASSERT_FALSE(m.ok()) << c.keep_bytes;
    EXPECT_THAT(std::string(m.status().message()), StartsWith(path + ": line "));
    for (const std::string& e : c.expected) EXPECT_THAT(std::string(m.status().message()), HasSubstr(e));
  }
}

// ---------- hand-written malformed inputs ----------

struct MalformedCase {
  std::string name;  // its extension picks the parser
  std::string contents;
  std::vector<std::string> expected;  // words the message must contain
};

absl::StatusOr<CsrMatrix> ParseByName(const MalformedCase& c) {
  if (c.name.ends_with(".smtx")) return ParseSmtx(c.contents, c.name);
  if (c.name.ends_with(".mtx")) return ParseMatrixMarket(c.contents, c.name);
  return ParseNpy(c.contents, c.name);
}

const std::string kGeneral = "%%MatrixMarket matrix coordinate real general\n";

std::vector<MalformedCase> MalformedCases() {
  const float nan = std::nanf(""), inf = INFINITY;
  return {
      {"empty.smtx", "", {"line 1:", "empty file"}},
      {"garbage.smtx", "abc", {"line 1:", "row count 'abc' is not a non-negative integer"}},
      {"negative.smtx", "-3, 4, 1\n0 1\n0\n", {"line 1:", "'-3' is not a non-negative integer"}},
      {"plus.smtx", "+3, 4, 1\n", {"line 1:", "'+3' is not a non-negative integer"}},
      {"short_header.smtx", "3, 4\n0 0 0 0\n", {"line 1:", "expected nonzero count, found end of line"}},
      {"long_header.smtx", "3, 4, 1, 7\n", {"line 1:", "unexpected '7'"}},
      {"huge_rows.smtx", "1000000000000, 4, 1\n", {"line 1:", "exceeds the limit"}},
      {"overflow.smtx", "99999999999999999999, 1, 1\n", {"line 1:", "'99999999999999999999' is too large"}},
      {"too_many_nnz.smtx", "2, 2, 5\n0 0 5\n0 1 0 1 0\n", {"line 1:", "5 nonzeros do not fit in a 2x2 matrix"}},
      {"nnz_beyond_file.smtx", "1000, 1000, 1000000\n0 1\n", {"line 1:", "need at least", "file truncated?"}},
      {"first_offset.smtx", "2, 2, 1\n1 1 1\n0\n", {"line 2:", "first row offset is 1, not 0"}},
      {"decreasing.smtx", "2, 2, 2\n0 2 1\n0 1\n", {"line 2:", "row offsets decrease at row 1 (2 then 1)"}},
      {"offset_past_nnz.smtx", "2, 2, 2\n0 1 3\n0 1\n", {"line 2:", "row offset 3 (row 2) exceeds nnz 2"}},
      {"last_offset.smtx", "2, 2, 2\n0 1 1\n0 1\n", {"line 2:", "last row offset is 1", "declares 2 nonzeros"}},
      {"extra_offsets.smtx", "2, 2, 1\n0 1 1 1\n0\n", {"line 2:", "more than 3 row offsets"}},
      {"cut_offsets.smtx", "1, 4, 1\n0      ", {"line 2:", "expected 2 row offsets, found 1 (file truncated?)"}},
      {"short_offsets.smtx", "2, 2, 2\n0 1\n0 1\n   ", {"line 2:", "expected 3 row offsets, found 2"}},
      {"col_range.smtx", "2, 2, 2\n0 1 2\n0 2\n", {"line 3:", "row 1: column index 2 out of range [0, 2)"}},
      {"unsorted.smtx", "1, 3, 2\n0 2\n2 1\n",
       {"line 3:", "row 0: column indices not strictly increasing", "unsorted"}},
      {"duplicate.smtx", "1, 3, 2\n0 2\n1 1\n", {"line 3:", "(1 then 1, a duplicate)"}},
      {"bad_col.smtx", "1, 3, 2\n0 2\n1 x\n", {"line 3:", "column index 'x' is not a non-negative integer"}},
      {"binary_col.smtx", "1, 3, 2\n0 2\n0 \x01\xff\n", {"line 3:", "column index '\\x01\\xff'"}},
      {"extra_cols.smtx", "1, 3, 2\n0 2\n1 2 0\n", {"line 3:", "more than 2 column indices"}},
      {"cut_cols.smtx", "1, 3, 2\n0 2\n1      ", {"line 3:", "expected 2 column indices, found 1 (file truncated?)"}},
      {"fourth_line.smtx", "1, 3, 2\n0 2\n1 2\n5\n", {"line 4:", "unexpected '5' after the column indices"}},
      {"empty.mtx", "", {"line 1:", "missing the '%%MatrixMarket' banner"}},
      {"array.mtx", "%%MatrixMarket matrix array real general\n2 2\n1\n2\n3\n4\n",
       {"line 1:", "unsupported format 'array'"}},
      {"complex.mtx", "%%MatrixMarket matrix coordinate complex general\n", {"line 1:", "unsupported field 'complex'"}},
      {"hermitian.mtx", "%%MatrixMarket matrix coordinate real hermitian\n", {"unsupported symmetry 'hermitian'"}},
      {"vector.mtx", "%%MatrixMarket vector coordinate real general\n", {"line 1:", "unsupported object"}},
      {"no_size.mtx", kGeneral + "% only comments\n", {"line 2:", "missing the size line", "file truncated?"}},
      {"short_size.mtx", kGeneral + "2 2\n", {"line 2:", "expected entry count, found end of line"}},
      {"not_square.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 3 1\n1 1 1\n", {"must be square"}},
      {"too_many.mtx", kGeneral + "2 2 5\n", {"line 2:", "5 entries do not fit in a 2x2 matrix"}},
      {"beyond_file.mtx", kGeneral + "100000 100000 1000000000\n1 1 1\n", {"line 2:", "need at least"}},
      {"huge_dim.mtx", kGeneral + "20000000 1 0\n", {"line 2:", "exceeds the limit"}},
      {"cut_entries.mtx", kGeneral + "2 2 2\n1 1 1.000000\n",
       {"line 3:", "expected 2 entries, found 1 (file truncated?)"}},
      {"row_range.mtx", kGeneral + "2 2 1\n3 1 1\n", {"line 3:", "row index 3 out of range [1, 2]"}},
      {"col_zero.mtx", kGeneral + "2 2 1\n1 0 1\n", {"line 3:", "column index 0 out of range [1, 2]"}},
      {"negative_index.mtx", kGeneral + "2 2 1\n-1 1 1\n", {"line 3:", "row index '-1' is not a non-negative integer"}},
      {"bad_value.mtx", kGeneral + "2 2 1\n1 1 abc\n", {"line 3:", "value 'abc' is not a number"}},
      {"nan.mtx", kGeneral + "1 1 1\n1 1 nan\n", {"line 3:", "value 'nan' is not finite"}},
      {"inf.mtx", kGeneral + "1 1 1\n1 1 -inf\n", {"line 3:", "value '-inf' is not finite"}},
      {"fp32_overflow.mtx", kGeneral + "1 1 1\n1 1 1e39\n", {"line 3:", "value '1e39' overflows fp32"}},
      {"double_overflow.mtx", kGeneral + "1 1 1\n1 1 1e999\n", {"line 3:", "value '1e999' is out of range"}},
      {"not_integer.mtx", "%%MatrixMarket matrix coordinate integer general\n1 1 1\n1 1 1.5\n",
       {"line 3:", "value '1.5' is not an integer"}},
      {"extra_token.mtx", kGeneral + "1 1 1\n1 1 1 9\n", {"line 3:", "unexpected '9' after the entry"}},
      {"pattern_value.mtx", "%%MatrixMarket matrix coordinate pattern general\n1 1 1\n1 1 5\n",
       {"line 3:", "unexpected '5' after the entry"}},
      {"duplicate.mtx", kGeneral + "2 2 2\n1 2 1\n1 2 3\n", {"line 4:", "duplicate entry (1, 2), also on line 3"}},
      {"mirrored_duplicate.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n",
       {"line 4:", "duplicate entry", "mirrored"}},
      {"skew_diagonal.mtx", "%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n1 1 1\n",
       {"line 3:", "diagonal entry (1, 1)"}},
      {"extra_entries.mtx", kGeneral + "2 2 1\n1 1 1\n2 2 2\n", {"line 4:", "more than the 1 entries"}},
      {"not_npy.npy", "hello", {"not a .npy file"}},
      {"version.npy", std::string("\x93NUMPY\x04\x00", 8) + "xx", {"unsupported .npy version 4.0"}},
      {"preamble.npy", std::string("\x93NUMPY\x01\x00", 8), {"preamble truncated"}},
      {"header_length.npy", std::string("\x93NUMPY\x01\x00\xff\xff{}", 12), {"does not fit", "file truncated?"}},
      {"int.npy", NpyFile(NpyDict("<i4", false, 1, 1), Bytes<int>({1})), {"dtype '<i4' unsupported"}},
      {"big_endian.npy", NpyFile(NpyDict(">f4", false, 1, 1), Bytes<float>({1})), {"dtype '>f4' unsupported"}},
      {"one_d.npy", NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", Bytes<float>({1, 2})),
       {"1 dimensions; a matrix needs 2"}},
      {"three_d.npy", NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1), }", Bytes<float>({1})),
       {"3 dimensions"}},
      {"short_data.npy", NpyFile(NpyDict("<f4", false, 2, 3), Bytes<float>({1, 2, 3, 4, 5})),
       {"expected 24 bytes for a 2x3 '<f4' array, found 20 (file truncated?)"}},
      {"long_data.npy", NpyFile(NpyDict("<f4", false, 1, 1), Bytes<float>({1, 2})), {"expected 4 bytes", "found 8"}},
      {"nan.npy", NpyFile(NpyDict("<f4", false, 2, 3), Bytes<float>({1, 2, 3, 4, 5, nan})),
       {"element at row 1, column 2 is NaN"}},
      {"inf.npy", NpyFile(NpyDict("<f4", true, 2, 2), Bytes<float>({0, inf, 0, 0})),
       {"element at row 1, column 0 is infinite"}},
      {"f8_overflow.npy", NpyFile(NpyDict("<f8", false, 1, 1), Bytes<double>({1e300})),
       {"element at row 0, column 0 overflows fp32"}},
      {"huge_shape.npy", NpyFile(NpyDict("<f4", false, 99999999, 1), ""), {"exceeds the limit"}},
      {"missing_key.npy", NpyFile("{'descr': '<f4', 'shape': (1, 1), }", Bytes<float>({1})), {"needs the keys"}},
      {"bad_bool.npy", NpyFile("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1, 1)}", Bytes<float>({1})),
       {"expected True or False"}},
      {"unterminated.npy", NpyFile("{'descr': '<f4", ""), {"unterminated string"}},
      {"unknown_key.npy", NpyFile("{'descr': '<f4', 'x': 1}", ""), {"unexpected or repeated key 'x'"}},
      {"negative_dim.npy", NpyFile(NpyDict("<f4", false, -1, 2), ""), {"expected a non-negative integer dimension"}},
      {"huge_dim.npy", NpyFile("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 1)}", ""),
       {"dimension is too large"}},
  };
}

TEST(MatrixFileMalformedTest, EachGivesAClearError) {
  for (const MalformedCase& c : MalformedCases()) {
    absl::StatusOr<CsrMatrix> m = ParseByName(c);
    ASSERT_FALSE(m.ok()) << c.name << " parsed";
    EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument) << m.status();
    const std::string message(m.status().message());
    EXPECT_THAT(message, StartsWith(c.name + ": ")) << c.name;
    for (const std::string& words : c.expected) EXPECT_THAT(message, HasSubstr(words)) << c.name;
  }
}

}  // namespace
}  // namespace sparseditto
