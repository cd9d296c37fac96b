#include "evaluator/gpu/cusparselt_loader.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <sstream>

#include "fmt/format.h"

namespace sparseditto::gpu::lt {
namespace {

constexpr char kSoname[] = "libcusparseLt.so.0";

std::vector<std::string> Glob(const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g;
  if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
    for (size_t i = 0; i < g.gl_pathc; ++i) out.push_back(g.gl_pathv[i]);
  }
  globfree(&g);
  return out;
}

template <typename F>
bool Resolve(void* lib, const char* symbol, F* out, std::string* missing) {
  *out = reinterpret_cast<F>(dlsym(lib, symbol));
  if (*out == nullptr && missing->empty()) *missing = symbol;
  return *out != nullptr;
}

// dlopen()s `path` and fills `api`; returns the reason on failure (and closes what it opened).
std::string TryLoad(const std::string& path, Api* api) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    return why ? why : "dlopen failed";
  }
  std::string missing;
  Resolve(lib, "cusparseLtInit", &api->Init, &missing);
  Resolve(lib, "cusparseLtDestroy", &api->Destroy, &missing);
  Resolve(lib, "cusparseLtGetProperty", &api->GetProperty, &missing);
  Resolve(lib, "cusparseLtDenseDescriptorInit", &api->DenseDescriptorInit, &missing);
  Resolve(lib, "cusparseLtStructuredDescriptorInit", &api->StructuredDescriptorInit, &missing);
  Resolve(lib, "cusparseLtMatDescriptorDestroy", &api->MatDescriptorDestroy, &missing);
  Resolve(lib, "cusparseLtMatmulDescriptorInit", &api->MatmulDescriptorInit, &missing);
  Resolve(lib, "cusparseLtMatmulAlgSelectionInit", &api->MatmulAlgSelectionInit, &missing);
  Resolve(lib, "cusparseLtMatmulPlanInit", &api->MatmulPlanInit, &missing);
  Resolve(lib, "cusparseLtMatmulPlanDestroy", &api->MatmulPlanDestroy, &missing);
  Resolve(lib, "cusparseLtMatmulGetWorkspace", &api->MatmulGetWorkspace, &missing);
  Resolve(lib, "cusparseLtMatmul", &api->Matmul, &missing);
  Resolve(lib, "cusparseLtSpMMAPruneCheck2", &api->SpMMAPruneCheck2, &missing);
  Resolve(lib, "cusparseLtSpMMACompressedSize2", &api->SpMMACompressedSize2, &missing);
  Resolve(lib, "cusparseLtSpMMACompress2", &api->SpMMACompress2, &missing);
  if (!missing.empty()) {
    dlclose(lib);
    return fmt::format("missing symbol {}", missing);
  }
  std::string optional_missing;
  Resolve(lib, "cusparseLtMatmulAlgSelectionDestroy", &api->MatmulAlgSelectionDestroy, &optional_missing);
  if (api->GetProperty(MAJOR_VERSION, &api->major) != CUSPARSE_STATUS_SUCCESS ||
      api->GetProperty(MINOR_VERSION, &api->minor) != CUSPARSE_STATUS_SUCCESS ||
      api->GetProperty(PATCH_LEVEL, &api->patch) != CUSPARSE_STATUS_SUCCESS) {
    dlclose(lib);
    return "cusparseLtGetProperty failed";
  }
  if (api->major == 0 && api->minor < 5) {
    dlclose(lib);
    return fmt::format("version {}.{}.{} is older than 0.5", api->major, api->minor, api->patch);
  }
  // Where the dynamic loader actually found it (for a bare soname).
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(api->Init), &info) != 0 && info.dli_fname != nullptr) {
    api->path = info.dli_fname;
  } else {
    api->path = path;
  }
  return "";
}

absl::StatusOr<const Api*> LoadOnce() {
  static Api api;
  std::vector<std::string> tried;
  for (const std::string& path : CusparseLtCandidatePaths()) {
    Api candidate;
    const std::string why = TryLoad(path, &candidate);
    if (why.empty()) {
      api = candidate;
      return &api;
    }
    tried.push_back(fmt::format("{} ({})", path, why));
  }
  std::ostringstream list;
  for (size_t i = 0; i < tried.size(); ++i) list << (i ? "; " : "") << tried[i];
  return absl::FailedPreconditionError(fmt::format(
      "cuSPARSELt not found: searched {} (set SPARSEDITTO_CUSPARSELT to the library or its folder)", list.str()));
}

}  // namespace

std::vector<std::string> CusparseLtCandidatePaths() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("SPARSEDITTO_CUSPARSELT"); env != nullptr && *env != '\0') {
    std::stringstream entries(env);
    std::string entry;
    while (std::getline(entries, entry, ':')) {
      if (entry.empty()) continue;
      const bool is_library = entry.find(".so") != std::string::npos;
      paths.push_back(is_library ? entry : entry + "/" + kSoname);
    }
  }
  paths.push_back(kSoname);
  std::vector<std::string> roots = {"/opt/*/.venv/lib/python3*/site-packages", "/opt/*/lib/python3*/site-packages",
                                    "/usr/local/lib/python3*/dist-packages", "/usr/local/lib/python3*/site-packages",
                                    "/usr/lib/python3/dist-packages"};
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    roots.push_back(std::string(home) + "/.local/lib/python3*/site-packages");
  }
  for (const std::string& root : roots) {
    for (const char* sub : {"/nvidia/cusparselt/lib/", "/nvidia/cu13/lib/", "/nvidia/cu12/lib/"}) {
      for (const std::string& match : Glob(root + sub + kSoname)) paths.push_back(match);
    }
  }
  paths.push_back(std::string("/usr/local/cuda/lib64/") + kSoname);
  return paths;
}

absl::StatusOr<const Api*> LoadCusparseLt() {
  static const absl::StatusOr<const Api*> loaded = LoadOnce();
  return loaded;
}

}  // namespace sparseditto::gpu::lt
