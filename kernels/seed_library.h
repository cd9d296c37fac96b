// The seed kernel library: every .cu in kernels/seeds/ with its metadata line, and which seeds apply
// to a task. The metadata line of a seed reads
//   // sparseditto:seed families=[block] dtypes=[fp16, bf16] archs=[sm_80, sm_90] block_sizes=[16, 32, 64]
// keys: families, dtypes, archs (required); block_sizes (square BLOCK sizes), nm (e.g. [2:4]) optional.
// The layouts a seed serves are read from its code, not declared: KN always, NK when the source
// defines sparseditto_layouts() with SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK) in its body (kernel_abi/
// sparseditto_kernel.h). The candidate host checks the compiled library's mask again at load
// (evaluator/runner/candidate_library.h), and seeds_compile_test holds the two equal for every seed.
// Pure parsing and file reads; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "task.pb.h"

namespace sparseditto {

inline constexpr std::string_view kSeedMarker = "sparseditto:seed";

struct SeedKernel {
  std::string name;    // file stem, e.g. "bsr_mma"
  std::string path;
  std::string source;
  std::vector<v1::PatternFamily> families;
  std::vector<v1::Dtype> dtypes;
  std::vector<std::string> archs;
  std::vector<int> block_sizes;                 // empty: any
  std::vector<std::pair<int, int>> nm;          // empty: any
  std::vector<v1::Layout> layouts;              // LAYOUT_KN, and LAYOUT_NK where the source exports it
};

// The layouts `source` says its run() supports: KN, plus NK when it defines sparseditto_layouts() whose
// body (up to its first '}') names SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_NK). A static reading: the
// compiled library's mask is what the harness trusts (and checks).
std::vector<v1::Layout> DeclaredLayouts(const std::string& source);

// Parses a seed's metadata line. InvalidArgument naming `name`, the line and the fault when the marker
// is missing or twice, a key is unknown or required and absent, or a value does not parse.
absl::StatusOr<SeedKernel> ParseSeed(std::string name, std::string source);

// Every *.cu in `dir`, sorted by name. Errors: NotFound (no such folder), or the first ParseSeed error.
absl::StatusOr<std::vector<SeedKernel>> LoadSeedLibrary(const std::string& dir);

// True when code declared for `declared` archs builds for `target`: `target` is listed, or it is an
// arch-specific target (sm_90a: its base arch plus instructions only that chip has, wgmma, setmaxnreg)
// whose base arch (sm_90) is listed. The one rule for seeds (SeedAppliesTo) and plans (plan_stage.h).
bool ArchBuildsFor(const std::vector<std::string>& declared, const std::string& target);

// True when the seed declares the task's family, dtype, every arch of the task (a seed for a base arch
// also covers its arch-specific target: sm_90 covers sm_90a), and (for BLOCK and N:M) its block size and
// n:m, and the task's layout. A FILE task matches seeds that list `file`.
bool SeedAppliesTo(const SeedKernel& seed, const v1::Task& task);

}  // namespace sparseditto
