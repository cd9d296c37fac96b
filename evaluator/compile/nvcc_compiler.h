// Stage 2 of the cascade (DESIGN.md §3.3): compile one candidate source with nvcc into a shared
// library. The compile runs as a child process (common/subprocess.h) in its own process group, with a
// clean environment, a private HOME and TMPDIR, a wall-time limit (the whole nvcc -> cudafe++/cicc/
// ptxas/gcc tree is killed at the deadline), RLIMIT_FSIZE and optionally RLIMIT_AS. The log (stderr
// merged in order) and the ptxas resource report are kept, the library's exports are checked
// (exported_symbols.h), and results are cached by content (compile_cache.h).
//
// Flags: nvcc -std=c++17 -O3 -shared -Xcompiler -fPIC -Xcompiler -fvisibility=hidden -Xptxas -v
// -lineinfo -I<abi dir> -gencode arch=compute_NN,code=sm_NN (per arch; sm_90a -> compute_90a/sm_90a)
// [extra flags] -o candidate.so candidate.cu -lcublas -lcublasLt (run in the compile's folder;
// -Iabi there is a copy of <abi dir>/sparseditto_kernel.h)
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/subprocess.h"
#include "evaluator/sandbox/sandbox_policy.h"
#include "evaluator/compile/compile_cache.h"
#include "evaluator/compile/compile_result.h"
#include "evaluator/compile/host_preprocess.h"

namespace sparseditto {

struct CompileOptions {
  std::string abi_include_dir;                 // folder holding sparseditto_kernel.h; required
  std::vector<std::string> archs = {"sm_90"};  // "sm_80", "sm_86", "sm_89", "sm_90", "sm_90a", "sm_100", ...
  double timeout_seconds = 120;                // a compile bomb ends here (timed_out = true)
  int64_t max_output_bytes = 256 << 20;        // RLIMIT_FSIZE for nvcc and its children
  // RLIMIT_AS for each process of the compile (cicc on a big kernel stays well under 4 GiB). nullopt:
  // inherit ours.
  std::optional<int64_t> max_address_space_bytes = int64_t{16} << 30;
  // Appended after the project's flags. nvcc runs in a scratch folder, so paths in them must be
  // absolute, and in the sandbox they must be readable under its Landlock rules (the toolchain's
  // folders; add others to Config::sandbox->landlock->read_only).
  std::vector<std::string> extra_flags;
  bool use_cache = true;                       // false: always compile (the result is still stored)
  // Added to nvcc's niceness (ResourceLimits::nice_increment): compiles on every core then yield the
  // CPU to the judge and the candidate hosts, whose waits are the GPU's idle time. 0: our priority.
  int nice_increment = 10;
};

// "-gencode arch=compute_90a,code=sm_90a" as two argv entries, for "sm_<digits>[a|f]".
// InvalidArgument for anything else.
absl::StatusOr<std::vector<std::string>> GencodeFlags(std::string_view arch);

// Libraries every candidate is linked with, placed after the source: cuBLAS and cuBLASLt, for the dense
// fallbacks (dense_cublas, dense_cublaslt).
inline constexpr std::array<std::string_view, 2> kCandidateLibraries = {"-lcublas", "-lcublasLt"};

// The project's flags for `options`, without -o and the source (see the file comment).
// InvalidArgument for an empty arch list or a bad arch.
absl::StatusOr<std::vector<std::string>> NvccFlags(const CompileOptions& options);

// The sandbox nvcc runs in by default: every layer of SandboxPolicy's defaults, Landlock with
// ToolchainLandlockRules (each compile adds its own folder read-write and the toolkit of Config::nvcc),
// and require_all_layers = true: a layer this machine lacks fails the compile naming it, unless
// SPARSEDITTO_ALLOW_MISSING_LAYERS=1 (MissingLayersAllowed, sandbox_probe.h), when it is let go and
// named in the compile log ("[sparseditto] nvcc ran without: ...").
SandboxPolicy DefaultNvccSandbox();

// Compiles candidates. Thread-safe: Compile may be called from many threads at once (CompilePool
// does). Compiles of the same cache key in this process are serialised, so the second one is a cache
// hit; across processes, the cache's renames keep entries whole.
class NvccCompiler {
 public:
  struct Config {
    std::string nvcc = "/usr/local/cuda/bin/nvcc";  // a path (made absolute); its folder leads the child's PATH
    std::string cache_directory;  // required; created if missing
    // Create trims the cache to this many bytes (CompileCache::Trim, entries unused for an hour
    // first); 0 never trims.
    uint64_t max_cache_bytes = uint64_t{8} << 30;
    // The OS sandbox of each compile (see DefaultNvccSandbox). nullopt: none (the compile still runs in
    // a folder of its own, as its own process group).
    std::optional<SandboxPolicy> sandbox = DefaultNvccSandbox();
  };

  // Runs `nvcc --version` and the host compiler's `--version` once (their output is the toolchain
  // identity in every cache key) and opens the cache, trimming it to max_cache_bytes (a failed trim
  // is not an error: the cache only grows). Removes compile folders left in the temp dir by processes
  // that no longer exist (a supervisor killed with -9). NotFound when nvcc is missing; FailedPrecondition when
  // it does not run; errors of CompileCache::Open.
  static absl::StatusOr<std::unique_ptr<NvccCompiler>> Create(const Config& config);

  // Compiles `source`. A candidate that fails to compile, times out or exports what it must not is a
  // CompileResult with ok = false (and failure, log), never an error status. Errors are the
  // harness's: InvalidArgument (no abi_include_dir, bad arch, non-positive timeout),
  // FailedPrecondition (sparseditto_kernel.h missing in abi_include_dir; a sandbox layer required
  // and not available here), Internal (scratch or cache I/O failed, nvcc could not be started).
  absl::StatusOr<CompileResult> Compile(std::string_view source, const CompileOptions& options) const;

  // The candidate's host translation unit as this compile's host pass sees it, for the static
  // screen: `nvcc -E` with NvccFlags(options) and HostPreprocessArguments (host_preprocess.h), through
  // RunNvcc like Compile, at most 30 s. A candidate that does not preprocess is a PreprocessResult
  // with ok = false, never an error; errors are the harness's, as for Compile. Not cached. Defined
  // in host_preprocess.cc. Thread-safe.
  absl::StatusOr<PreprocessResult> PreprocessHost(std::string_view source, const CompileOptions& options) const;

  const std::string& toolchain_identity() const { return toolchain_identity_; }
  const CompileCache& cache() const { return cache_; }

 private:
  NvccCompiler(Config config, std::string toolchain_identity, CompileCache cache)
      : config_(std::move(config)), toolchain_identity_(std::move(toolchain_identity)), cache_(std::move(cache)) {}
  // The one spawn path of nvcc (Compile and PreprocessHost, evaluator/compile/host_preprocess.cc): a
  // fresh compile folder holding `source` as candidate.cu and the ABI header as abi/, the project's
  // `flags` (the -I of the ABI folder made -Iabi) then `tail`, the limits of `options` and the
  // sandbox of Config; `collect` reads what it needs from the folder before it is removed. Errors: a
  // sandbox layer required and missing (FailedPrecondition), nvcc not started (Internal), collect's.
  absl::StatusOr<CommandResult> RunNvcc(
      std::string_view source, std::string_view abi_header, const std::vector<std::string>& flags,
      const std::vector<std::string>& tail, const CompileOptions& options,
      const std::function<absl::Status(const std::string& work, const CommandResult& run)>& collect) const;
  absl::StatusOr<CompileResult> CompileUncached(std::string_view source, const std::vector<std::string>& flags,
                                                const CompileOptions& options, const std::string& key,
                                                std::string_view abi_header) const;
  std::string NvccPath() const;  // PATH for the child: nvcc's folder first

  const Config config_;
  const std::string toolchain_identity_;
  const CompileCache cache_;
  mutable absl::Mutex in_flight_mutex_;
  mutable std::vector<std::string> in_flight_keys_ ABSL_GUARDED_BY(in_flight_mutex_);
};

}  // namespace sparseditto
