#include "evaluator/compile/compile_test_sources.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "fmt/format.h"

namespace sparseditto::testing {

std::string TinyCandidate(std::string_view value) {
  return fmt::format(R"cu(#include "sparseditto_kernel.h"
__global__ void Fill(float* c, int n) {{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = {};
}}
SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem*, void** state, char*, size_t) {{
  *state = nullptr;
  return 0;
}}
SPARSEDITTO_EXPORT int sparseditto_run(void*, const void*, void* c, int64_t n, cudaStream_t stream) {{
  Fill<<<static_cast<unsigned>((n + 255) / 256), 256, 0, stream>>>(static_cast<float*>(c), static_cast<int>(n));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}}
SPARSEDITTO_EXPORT void sparseditto_release(void*) {{}}
)cu",
                     value);
}

const char kSyntaxErrorCandidate[] = R"cu(#include "sparseditto_kernel.h"
__global__ void Broken(float* c) {
  c[0] = 1.0f +;
}
)cu";

const char kCompileBombCandidate[] = R"cu(#include "sparseditto_kernel.h"
#include <utility>
constexpr long Spin(long n) { long s = 0; for (long i = 0; i < n; ++i) s += i & 3; return s; }
template <long I> struct Step { static_assert(Spin(90000 + I) > 0, "spin"); };
template <long... I> constexpr int Expand(std::integer_sequence<long, I...>) { return (sizeof(Step<I>) + ...); }
static_assert(Expand(std::make_integer_sequence<long, 100000>{}) > 0, "all");
)cu";

ScratchDir::ScratchDir() {
  path_ = (std::filesystem::temp_directory_path() / "sd-compile-test-XXXXXX").string();
  if (mkdtemp(path_.data()) == nullptr) path_.clear();
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
}

int LiveProcessesMentioning(std::string_view text) {
  int count = 0;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string pid = entry.path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos || pid == std::to_string(getpid())) continue;
    std::ifstream cmdline(entry.path() / "cmdline");
    const std::string args((std::istreambuf_iterator<char>(cmdline)), {});
    if (args.find(text) == std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    const std::string status((std::istreambuf_iterator<char>(stat)), {});
    const size_t paren = status.rfind(')');
    if (paren != std::string::npos && paren + 2 < status.size() && status[paren + 2] != 'Z') ++count;
  }
  return count;
}

}  // namespace sparseditto::testing
