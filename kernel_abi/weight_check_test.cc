// sd_check_weight (sparseditto_weight_check.h), the check an exported kernel's prepare runs: a weight of
// the searched pattern passes, one that breaks it fails naming what differs and where.
#include "sparseditto_weight_check.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace {

using ::testing::HasSubstr;

// A host CSR from rows of '1' (nonzero) and '.' (zero), with sd_problem pointing into it.
struct Weight {
  std::vector<int32_t> row_offsets = {0}, col_indices;
  std::vector<float> values;
  std::vector<int64_t> n_values = {16};
  sd_problem problem = {};

  Weight(const std::vector<std::string>& grid, sd_pattern pattern, int32_t dtype = SD_DTYPE_FP16) {
    for (const std::string& row : grid) {
      for (size_t c = 0; c < row.size(); ++c) {
        if (row[c] == '1') col_indices.push_back(static_cast<int32_t>(c));
      }
      row_offsets.push_back(static_cast<int32_t>(col_indices.size()));
    }
    values.assign(col_indices.size(), 1.0f);
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.dtype = dtype;
    problem.rows = static_cast<int64_t>(grid.size());
    problem.cols = grid.empty() ? 0 : static_cast<int64_t>(grid[0].size());
    problem.nnz = static_cast<int64_t>(col_indices.size());
    problem.pattern = pattern;
    problem.row_offsets = row_offsets.data();
    problem.col_indices = col_indices.data();
    problem.values = values.data();
    problem.n_values = n_values.data();
    problem.num_n_values = 1;
  }
};

sd_pattern Pattern(int32_t family) {
  sd_pattern p = {};
  p.family = family;
  return p;
}

sd_weight_spec Spec(sd_pattern pattern, int64_t row_unit = 1, int64_t col_unit = 1) {
  sd_weight_spec spec = {};
  spec.dtype = SD_DTYPE_FP16;
  spec.pattern = pattern;
  spec.row_unit = row_unit;
  spec.col_unit = col_unit;
  return spec;
}

// "" when the check passes, else its message.
std::string Check(const sd_problem& problem, const sd_weight_spec& spec) {
  char error[256] = "untouched";
  return sd_check_weight(&problem, &spec, error, sizeof error) == 0 ? "" : error;
}

TEST(WeightCheck, EachFamilyPassesItsPatternAndNamesWhereAWeightBreaksIt) {
  sd_pattern nm = Pattern(SD_PATTERN_N_M);
  nm.n = 2;
  nm.m = 4;
  sd_pattern block = Pattern(SD_PATTERN_BLOCK);
  block.block_rows = 2;
  block.block_cols = 2;
  sd_pattern band = Pattern(SD_PATTERN_BANDED);
  band.half_bandwidth = 1;
  sd_pattern diagonal = Pattern(SD_PATTERN_BLOCK_DIAGONAL);
  diagonal.num_blocks = 2;
  struct Case {
    const char* name;
    std::vector<std::string> grid;
    sd_pattern pattern;
    std::string want;  // "" = passes, else a part of the message
  } cases[] = {
      {"2:4 held", {"11..1.1.", ".11.11.."}, nm, ""},
      {"2:4 broken in row 1, group 1", {"11..1.1.", ".11.111."}, nm,
       "weight check: row 1, columns 4..7 (group 1): 3 nonzeros, the 2:4 pattern allows 2"},
      {"dense 2x2 blocks", {"11..", "11..", "..11", "..11"}, block, ""},
      {"a block not dense", {"11..", "1...", "..11", "..11"}, block, "rows 0 and 1 of block row 0"},
      {"a half block in both rows", {"1...", "1...", "....", "...."}, block,
       "block (row block 0, column block 0; columns 0..1) is neither empty nor dense: row 0 holds 1 of its 2"},
      {"whole rows", {"1111", "....", "1111"}, Pattern(SD_PATTERN_ROW_SPARSE), ""},
      {"a partial row", {"1111", ".1..", "1111"}, Pattern(SD_PATTERN_ROW_SPARSE), "row 1 holds 1 of 4 columns"},
      {"whole columns", {"1..1", "1..1"}, Pattern(SD_PATTERN_COLUMN_SPARSE), ""},
      {"a partial column", {"1..1", "1..."}, Pattern(SD_PATTERN_COLUMN_SPARSE), "column 3 holds 1 of 2 rows"},
      {"a dense band", {"11..", "111.", ".111", "..11"}, band, ""},
      {"outside the band", {"11.1", "111.", ".111", "..11"}, band, "row 0 holds 3 nonzeros (columns 0..3); the band"},
      {"dense diagonal blocks", {"11..", "11..", "..11", "..11"}, diagonal, ""},
      {"off the diagonal", {"11..", "111.", "..11", "..11"}, diagonal, "row 1 holds 3 nonzeros"},
      {"dense", {"111", "111"}, Pattern(SD_PATTERN_DENSE), ""},
      {"not dense", {"111", "1.1"}, Pattern(SD_PATTERN_DENSE), "row 1 holds 2 nonzeros"},
      {"unstructured takes any", {"1..1", "...."}, Pattern(SD_PATTERN_UNSTRUCTURED), ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Weight w(c.grid, c.pattern);
    const std::string got = Check(w.problem, Spec(c.pattern));
    if (c.want.empty()) {
      EXPECT_EQ(got, "");
    } else {
      EXPECT_THAT(got, HasSubstr(c.want));
    }
  }
}

TEST(WeightCheck, NamesTheDeclaredFieldDtypeShapeOrCsrThatDiffers) {
  sd_pattern nm = Pattern(SD_PATTERN_N_M);
  nm.n = 2;
  nm.m = 4;
  Weight good({"11..1.1.", ".11.11.."}, nm);
  EXPECT_EQ(Check(good.problem, Spec(nm, 1, 4)), "");
  struct Case {
    const char* name;
    void (*damage)(sd_problem*, Weight*);
    std::string want;
  } cases[] = {
      {"dtype", [](sd_problem* p, Weight*) { p->dtype = SD_DTYPE_FP32; }, "dtype 1, the kernel was searched for 2"},
      {"pattern.m", [](sd_problem* p, Weight*) { p->pattern.m = 8; }, "pattern.m is 8, the kernel was searched for 4"},
      {"family", [](sd_problem* p, Weight*) { p->pattern.family = SD_PATTERN_DENSE; }, "pattern.family is 8"},
      {"abi", [](sd_problem* p, Weight*) { p->abi_version = 0; }, "abi_version 0"},
      {"cols not a multiple of m", [](sd_problem* p, Weight*) { p->cols = 9; }, "shape 2 x 9"},
      {"unsorted columns", [](sd_problem*, Weight* w) { std::swap(w->col_indices[0], w->col_indices[1]); },
       "row 0, entry 1: column 0 is outside [0, 8) or not above the one before"},
      {"offsets end past nnz", [](sd_problem* p, Weight*) { p->nnz = 7; }, "run from 0 to 8; a canonical CSR's run from 0 to nnz 7"},
      {"null columns", [](sd_problem* p, Weight*) { p->col_indices = nullptr; }, "is null"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    Weight w({"11..1.1.", ".11.11.."}, nm);
    c.damage(&w.problem, &w);
    EXPECT_THAT(Check(w.problem, Spec(nm, 1, 4)), HasSubstr(c.want));
  }
}

// A kernel searched on one real matrix takes only that matrix: its shape, nnz and every row's columns.
TEST(WeightCheck, ARealMatrixMustBeThatMatrixAndTheRowsThatDifferAreNamed) {
  std::vector<std::string> grid(32, "1.1.....");
  Weight searched(grid, Pattern(SD_PATTERN_UNSTRUCTURED));
  sd_weight_spec spec = Spec(Pattern(SD_PATTERN_UNSTRUCTURED));
  spec.exact = 1;
  spec.rows = 32;
  spec.cols = 8;
  spec.nnz = searched.problem.nnz;
  for (int chunk = 0; chunk < SD_WEIGHT_DIGEST_CHUNKS; ++chunk) {
    spec.chunk_digests[chunk] = sd_structure_digest(searched.row_offsets.data(), searched.col_indices.data(),
                                                    sd_digest_chunk_begin(32, chunk), sd_digest_chunk_begin(32, chunk + 1));
  }
  EXPECT_EQ(Check(searched.problem, spec), "");
  grid[21] = "1..1....";  // same nnz, another column
  Weight moved(grid, Pattern(SD_PATTERN_UNSTRUCTURED));
  EXPECT_THAT(Check(moved.problem, spec), HasSubstr("rows 20..21 hold other columns than the matrix the kernel was searched on"));
  grid[21] = "1.11....";
  Weight more(grid, Pattern(SD_PATTERN_UNSTRUCTURED));
  EXPECT_THAT(Check(more.problem, spec), HasSubstr("a 32 x 8 matrix with nnz 65; the kernel was searched on one matrix, 32 x 8 with nnz 64"));
}

TEST(WeightCheck, ATruncatedBufferStaysTerminatedAndAMissingOneIsNotWritten) {
  Weight w({"111", "1.1"}, Pattern(SD_PATTERN_DENSE));
  const sd_weight_spec spec = Spec(Pattern(SD_PATTERN_DENSE));
  char small[12];
  EXPECT_EQ(sd_check_weight(&w.problem, &spec, small, sizeof small), 1);
  EXPECT_EQ(std::string(small), "weight chec");
  EXPECT_EQ(sd_check_weight(&w.problem, &spec, nullptr, 0), 1);
  EXPECT_EQ(sd_check_weight(nullptr, &spec, nullptr, 0), 1);
}

}  // namespace
