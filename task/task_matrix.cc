#include "task/task_matrix.h"

#include "fmt/format.h"
#include "matrix/generators.h"
#include "matrix/matrix_file.h"

namespace sparseditto {

uint64_t TaskMatrixSeed(const v1::Task& task) {
  return task.matrix().seed() != 0 ? task.matrix().seed() : task.seed();
}

absl::StatusOr<CsrMatrix> MaterializeTaskMatrix(const v1::Task& task) {
  const uint64_t seed = TaskMatrixSeed(task);
  switch (task.matrix().source_case()) {
    case v1::MatrixSource::kGenerated:
      return GenerateMatrix(task.pattern(), task.matrix().generated().rows(), task.matrix().generated().cols(), seed,
                            task.dtype());
    case v1::MatrixSource::kFile:
      return ReadMatrixFile(task.matrix().file().path(), task.dtype(), seed);
    default:
      return absl::InvalidArgumentError(fmt::format("task {}: no matrix (generated or file)", task.name()));
  }
}

}  // namespace sparseditto
