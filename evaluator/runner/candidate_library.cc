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
  if (auto layouts = reinterpret_cast<decltype(&sparseditto_layouts)>(resolve("sparseditto_layouts"))) {
    lib.layouts = layouts();
  }
  return lib;
}

absl::Status CheckLayoutSupported(const CandidateLibrary& library, int32_t layout) {
  const bool known = layout == SD_LAYOUT_KN || layout == SD_LAYOUT_NK;  // the harness's own, whatever the mask says
  if (known && (library.layouts & SPARSEDITTO_LAYOUT_BIT(layout)) != 0) return absl::OkStatus();
  const char* name = layout == SD_LAYOUT_KN ? "kn" : layout == SD_LAYOUT_NK ? "nk" : "unknown";
  return absl::FailedPreconditionError(fmt::format(
      "the kernel does not support layout {} ({}): its sparseditto_layouts() mask is {:#x}{}; export "
      "sparseditto_layouts() with SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_{}) (kernel_abi/sparseditto_kernel.h) once run "
      "reads B and writes C in that layout",
      name, layout, library.layouts, library.layouts == SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN) ? " (KN only)" : "",
      layout == SD_LAYOUT_NK ? "NK" : "KN"));
}

}  // namespace sparseditto
