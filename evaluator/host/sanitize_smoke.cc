#include "evaluator/host/sanitize_smoke.h"

#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/status_format.h"
#include "evaluator/host/host_lockdown.h"
#include "evaluator/runner/candidate_library.h"
#include "evaluator/runner/framing.h"
#include "evaluator/runner/smoke_cases.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "runner.pb.h"
#include "task/task_matrix.h"

namespace sparseditto {
namespace {

// +-0.5 in the dtype's bits: finite inputs that need no conversion routines.
std::vector<char> HalfOnes(int64_t count, int32_t dtype, uint64_t seed) {
  std::mt19937_64 rng(seed);
  const size_t elem = dtype == v1::DTYPE_FP32 ? 4 : 2;
  std::vector<char> bytes(count * elem);
  for (int64_t i = 0; i < count; ++i) {
    const bool negative = rng() & 1;
    if (elem == 4) {
      const uint32_t bits = negative ? 0xBF000000u : 0x3F000000u;
      std::memcpy(&bytes[i * 4], &bits, 4);
    } else {
      const uint16_t bits = dtype == v1::DTYPE_FP16 ? (negative ? 0xB800 : 0x3800) : (negative ? 0xBF00 : 0x3F00);
      std::memcpy(&bytes[i * 2], &bits, 2);
    }
  }
  return bytes;
}

int Fail(const std::string& what) {
  fmt::print(stderr, "sparseditto-candidate-host --sanitize: {}\n", what);
  return 3;
}

}  // namespace

int RunSanitizeSmoke(int argc, char** argv) {
  if (argc != 5) {
    fmt::print(stderr, "usage: sparseditto-candidate-host --sanitize REQUEST_FILE ROWS COLS\n");
    return 2;
  }
  const int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
  v1::RunnerRequest request;
  if (fd < 0 || !ReadFrame(fd, &request).ok() || !request.has_evaluate()) return Fail("cannot read the request");
  close(fd);
  const v1::EvaluateRequest& evaluate = request.evaluate();
  const int64_t rows = std::atoll(argv[3]), cols = std::atoll(argv[4]);
  auto cases = MakeSmokeCases(evaluate.task(), rows, cols, evaluate.check_seed());
  if (!cases.ok()) return Fail(std::string(cases.status().message()));
  // The task's own tiles (MakeTaskCropCase), made before the candidate is loaded: nothing of it runs while
  // this process reads the task's matrix file. A task that cannot be cropped is said on the tool's log (which
  // the evaluator keeps) and the smoke cases still run: it is not the candidate's failure.
  {
    auto task_matrix = MaterializeTaskMatrix(evaluate.task());
    auto crop = task_matrix.ok() ? MakeTaskCropCase(evaluate.task(), *task_matrix) : task_matrix.status();
    if (crop.ok()) {
      cases->push_back(*std::move(crop));
    } else {
      fmt::print("sparseditto-candidate-host --sanitize: no task crop case: {}\n", crop.status().message());
    }
  }
  if (cudaSetDevice(0) != cudaSuccess || cudaFree(nullptr) != cudaSuccess) return Fail("no usable CUDA device");
  // The judged host's in-process layers (SPARSEDITTO_HOST_LOCKDOWN, set by the evaluator from the same layer list),
  // after CUDA and the tool's injection are up and before the candidate is loaded.
  const char* layers = std::getenv("SPARSEDITTO_HOST_LOCKDOWN");
  if (absl::Status s = LockDownBeforeLoad(evaluate.library_path(), layers == nullptr ? "" : layers); !s.ok()) {
    return Fail(fmt::format("lockdown: {}", s.message()));
  }
  auto library = LoadCandidateLibrary(evaluate.library_path());
  if (!library.ok()) return Fail(std::string(library.status().message()));
  const int32_t dtype = evaluate.task().dtype();
  const size_t elem = dtype == v1::DTYPE_FP32 ? 4 : 2;
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) return Fail("cannot create a stream");
  uint64_t seed = evaluate.check_seed();
  for (const SmokeCase& smoke : *cases) {
    const CsrMatrix& m = smoke.matrix;
    sd_problem problem{};
    problem.abi_version = SPARSEDITTO_ABI_VERSION;
    problem.dtype = dtype;
    problem.rows = m.rows;
    problem.cols = m.cols;
    problem.nnz = m.nnz();
    const v1::PatternSpec& p = smoke.pattern;
    problem.pattern = {p.family(), static_cast<float>(p.sparsity()), p.block_rows(), p.block_cols(), p.n(), p.m(),
                       p.half_bandwidth(), p.num_blocks()};
    problem.row_offsets = m.row_offsets.data();
    problem.col_indices = m.col_indices.data();
    problem.values = m.values.data();
    problem.n_values = smoke.n_values.data();
    problem.num_n_values = static_cast<int32_t>(smoke.n_values.size());
    problem.device = 0;
    problem.layout = evaluate.task().layout();  // the cascade already held the library's mask to it
    void* state = nullptr;
    char error[1024] = {0};
    if (library->prepare(&problem, &state, error, sizeof(error) - 1) != 0) {
      return Fail(fmt::format("{}: prepare failed: {}", smoke.name, error));
    }
    for (int64_t n : smoke.n_values) {
      const std::vector<char> b_host = HalfOnes(m.cols * n, dtype, ++seed);
      void *b = nullptr, *c = nullptr;
      cudaError_t e = cudaMalloc(&b, std::max<size_t>(b_host.size(), 256));
      if (e == cudaSuccess) e = cudaMalloc(&c, std::max<size_t>(elem * m.rows * n, 256));
      if (e == cudaSuccess) e = cudaMemcpy(b, b_host.data(), b_host.size(), cudaMemcpyHostToDevice);
      if (e == cudaSuccess) e = cudaMemset(c, 0xff, elem * m.rows * n);
      if (e != cudaSuccess) return Fail(fmt::format("{}: buffers: {}", smoke.name, cudaGetErrorString(e)));
      const int rc = library->run(state, b, c, n, stream);
      e = cudaStreamSynchronize(stream);
      if (e == cudaSuccess) e = cudaDeviceSynchronize();
      if (rc != 0 || e != cudaSuccess) {
        return Fail(fmt::format("{}: run(n={}) returned {}: {}", smoke.name, n, rc, cudaGetErrorString(e)));
      }
      cudaFree(b);
      cudaFree(c);
    }
    library->release(state);
    if (cudaDeviceSynchronize() != cudaSuccess) return Fail(smoke.name + ": after release");
    // What the tool saw, for the evaluator's log (a record, not a verdict: the tool's exit code is that).
    fmt::print("sparseditto-candidate-host --sanitize: ran {} ({} nonzeros) at n = {}\n", smoke.name, m.nnz(),
               fmt::join(smoke.n_values, ", "));
  }
  return 0;
}

}  // namespace sparseditto
