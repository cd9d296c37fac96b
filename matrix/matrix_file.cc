// ReadMatrixFile: reads a file into memory, picks the parser by extension, and gives the matrix
// values of the task's dtype.
#include "matrix/matrix_file.h"

#include <algorithm>
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

// The file opened, its size checked.
struct OpenedFile {
  std::unique_ptr<FILE, int (*)(FILE*)> file{nullptr, &std::fclose};
  uint64_t size = 0;
};

absl::StatusOr<OpenedFile> OpenMatrixFile(const std::string& path) {
  std::error_code error;
  const std::filesystem::file_status status = std::filesystem::status(path, error);
  if (status.type() == std::filesystem::file_type::not_found) {
    return absl::NotFoundError(fmt::format("{}: no such file", path));
  }
  if (error) return absl::InvalidArgumentError(fmt::format("{}: cannot access: {}", path, error.message()));
  if (!std::filesystem::is_regular_file(status)) {
    return absl::InvalidArgumentError(fmt::format("{}: not a regular file", path));
  }
  OpenedFile opened;
  opened.size = std::filesystem::file_size(path, error);
  if (error) return absl::InvalidArgumentError(fmt::format("{}: cannot get the size: {}", path, error.message()));
  if (opened.size > static_cast<uintmax_t>(kMaxMatrixFileBytes)) {
    return absl::InvalidArgumentError(fmt::format("{}: {} bytes exceed the limit of {} bytes for a matrix file",
                                                  path, opened.size, kMaxMatrixFileBytes));
  }
  opened.file.reset(std::fopen(path.c_str(), "rb"));
  if (opened.file == nullptr) {
    return absl::InvalidArgumentError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  return opened;
}

absl::Status ReadInto(const std::string& path, FILE* file, char* data, size_t bytes) {
  const size_t read = std::fread(data, 1, bytes, file);
  if (read != bytes) return absl::InvalidArgumentError(fmt::format("{}: read {} of {} bytes", path, read, bytes));
  return absl::OkStatus();
}

// The most bytes the file may hold by its header (matrix_file.h), from `head`, its first bytes.
absl::StatusOr<int64_t> DeclaredBytes(MatrixFormat format, std::string_view head, uint64_t file_bytes,
                                      const std::string& path) {
  if (format == MatrixFormat::kNpy) return NpyFileBytes(head, file_bytes, path);
  if (head.size() < file_bytes) {  // only whole lines: a cut number would read as a smaller one
    const size_t end = head.rfind('\n');
    if (end == std::string_view::npos) {
      return absl::InvalidArgumentError(fmt::format(
          "{}: line 1: no end of line in the first {} bytes; not a {} file", path, head.size(),
          format == MatrixFormat::kSmtx ? ".smtx" : "MatrixMarket"));
    }
    head = head.substr(0, end + 1);
  }
  return format == MatrixFormat::kSmtx ? SmtxFileBytesBound(head, path) : MatrixMarketFileBytesBound(head, path);
}

// Reads the file after checking its header against its size (matrix_file.h).
absl::StatusOr<std::string> ReadCheckedFile(const std::string& path, MatrixFormat format) {
  SD_ASSIGN_OR_RETURN(OpenedFile opened, OpenMatrixFile(path));
  std::string contents(static_cast<size_t>(std::min<uint64_t>(opened.size, kMatrixHeadBytes)), '\0');
  SD_RETURN_IF_ERROR(ReadInto(path, opened.file.get(), contents.data(), contents.size()));
  SD_ASSIGN_OR_RETURN(const int64_t declared, DeclaredBytes(format, contents, opened.size, path));
  if (declared > kMaxMatrixFileBytes) {
    return absl::InvalidArgumentError(fmt::format("{}: the header declares a matrix of {} bytes, over the limit "
                                                  "of {} bytes for a matrix file",
                                                  path, declared, kMaxMatrixFileBytes));
  }
  if (opened.size > static_cast<uint64_t>(declared)) {
    return absl::InvalidArgumentError(fmt::format(
        "{}: {} bytes, more than the {} its header allows{} (garbage after the matrix, or a header that "
        "does not describe the file?); refused before reading it",
        path, opened.size, declared, format == MatrixFormat::kNpy ? "" : " at most"));
  }
  const size_t head = contents.size();
  contents.resize(static_cast<size_t>(opened.size));
  SD_RETURN_IF_ERROR(ReadInto(path, opened.file.get(), contents.data() + head, contents.size() - head));
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
  SD_ASSIGN_OR_RETURN(const std::string contents, ReadCheckedFile(path, format));
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
