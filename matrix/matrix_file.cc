// ReadMatrixFile: reads a file into memory, picks the parser by extension, and gives the matrix
// values of the task's dtype.
#include "matrix/matrix_file.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "common/dtype.h"
#include "common/status_macros.h"
#include "fmt/format.h"
#include "matrix/generators.h"

namespace sparseditto {
namespace {

enum class MatrixFormat { kSmtx, kMatrixMarket, kNpy };

absl::StatusOr<MatrixFormat> FormatFromExtension(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  for (char& c : extension) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (extension == ".smtx") return MatrixFormat::kSmtx;
  if (extension == ".mtx") return MatrixFormat::kMatrixMarket;
  if (extension == ".npy") return MatrixFormat::kNpy;
  return absl::InvalidArgumentError(fmt::format(
      "{}: unknown matrix file extension '{}' (expected .smtx, .mtx or .npy)", path, extension));
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(fmt::format("{}: no such file", path));
  }
  if (error) return absl::InvalidArgumentError(fmt::format("{}: cannot access: {}", path, error.message()));
  if (!std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(fmt::format("{}: not a regular file", path));
  }
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) return absl::InvalidArgumentError(fmt::format("{}: cannot get the size: {}", path, error.message()));
  if (size > static_cast<uintmax_t>(kMaxMatrixFileBytes)) {
    return absl::InvalidArgumentError(
        fmt::format("{}: {} bytes exceed the limit of {} bytes for a matrix file", path, size, kMaxMatrixFileBytes));
  }
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  std::string contents(static_cast<size_t>(size), '\0');
  const size_t read = std::fread(contents.data(), 1, contents.size(), file.get());
  if (read != contents.size()) {
    return absl::InvalidArgumentError(fmt::format("{}: read {} of {} bytes", path, read, contents.size()));
  }
  return contents;
}

// Rounds the file's values to `dtype`; a value beyond the dtype's range is an error.
absl::Status RoundValues(const std::string& path, v1::Dtype dtype, CsrMatrix* m) {
  for (int64_t row = 0; row < m->rows; ++row) {
    for (int32_t k = m->row_offsets[row]; k < m->row_offsets[row + 1]; ++k) {
      const float rounded = RoundToDtype(m->values[k], dtype);
      if (!std::isfinite(rounded)) {
        return absl::InvalidArgumentError(fmt::format("{}: value {} at row {}, column {} overflows {}", path,
                                                      m->values[k], row, m->col_indices[k], DtypeName(dtype)));
      }
      m->values[k] = rounded;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CsrMatrix> ReadMatrixFile(const std::string& path, v1::Dtype dtype, uint64_t value_seed) {
  if (DtypeBytes(dtype) == 0) {
    return absl::InvalidArgumentError(fmt::format("{}: no dtype given to round the values to", path));
  }
  SD_ASSIGN_OR_RETURN(const MatrixFormat format, FormatFromExtension(path));
  SD_ASSIGN_OR_RETURN(const std::string contents, ReadWholeFile(path));
  absl::StatusOr<CsrMatrix> parsed;
  switch (format) {
    case MatrixFormat::kSmtx: parsed = ParseSmtx(contents, path); break;
    case MatrixFormat::kMatrixMarket: parsed = ParseMatrixMarket(contents, path); break;
    case MatrixFormat::kNpy: parsed = ParseNpy(contents, path); break;
  }
  if (!parsed.ok()) return parsed.status();
  CsrMatrix m = *std::move(parsed);
  if (m.values.empty()) {
    FillRandomValues(&m, value_seed, dtype);
  } else {
    SD_RETURN_IF_ERROR(RoundValues(path, dtype, &m));
  }
  SD_RETURN_IF_ERROR(ValidateCsr(m, path));
  return m;
}

}  // namespace sparseditto
