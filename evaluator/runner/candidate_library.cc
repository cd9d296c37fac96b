#include "evaluator/runner/candidate_library.h"

#include <dlfcn.h>

#include "fmt/format.h"

namespace sparseditto {

absl::StatusOr<CandidateLibrary> LoadCandidateLibrary(const std::string& path) {
  CandidateLibrary lib;
  lib.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle == nullptr) return absl::NotFoundError(fmt::format("dlopen {}: {}", path, dlerror()));
  auto resolve = [&](const char* name) -> void* { return dlsym(lib.handle, name); };
  lib.prepare = reinterpret_cast<decltype(lib.prepare)>(resolve("sparseditto_prepare"));
  lib.run = reinterpret_cast<decltype(lib.run)>(resolve("sparseditto_run"));
  lib.release = reinterpret_cast<decltype(lib.release)>(resolve("sparseditto_release"));
  auto version = reinterpret_cast<decltype(&sparseditto_abi_version)>(resolve("sparseditto_abi_version"));
  for (auto [symbol, name] : {std::pair<void*, const char*>{reinterpret_cast<void*>(lib.prepare), "sparseditto_prepare"},
                              {reinterpret_cast<void*>(lib.run), "sparseditto_run"},
                              {reinterpret_cast<void*>(lib.release), "sparseditto_release"},
                              {reinterpret_cast<void*>(version), "sparseditto_abi_version"}}) {
    if (symbol == nullptr) {
      return absl::NotFoundError(fmt::format("{} does not export {} (include sparseditto_kernel.h and define it "
                                             "with SPARSEDITTO_EXPORT)", path, name));
    }
  }
  lib.abi_version = version();
  if (lib.abi_version != SPARSEDITTO_ABI_VERSION) {
    return absl::FailedPreconditionError(fmt::format("candidate built against ABI version {}, harness is {}",
                                                     lib.abi_version, SPARSEDITTO_ABI_VERSION));
  }
  return lib;
}

}  // namespace sparseditto
