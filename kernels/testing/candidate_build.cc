#include "kernels/testing/candidate_build.h"

#include <dlfcn.h>

#include <array>
#include <cstdio>
#include <memory>

#include "fmt/format.h"

namespace sparseditto::testing {

absl::StatusOr<std::string> CompileCandidate(const std::string& nvcc, const std::string& source_path,
                                             const std::vector<std::string>& archs,
                                             const std::string& output_path) {
  std::string command = fmt::format("timeout 300 '{}' -std=c++17 -O3 -Xptxas -v -shared -Xcompiler -fPIC -I'{}' -o '{}' '{}'",
                                    nvcc, SPARSEDITTO_SOURCE_DIR "/kernel_abi", output_path, source_path);
  for (const std::string& arch : archs) {
    const std::string number = arch.substr(3);  // "sm_90" -> "90"
    command += fmt::format(" -gencode arch=compute_{0},code=sm_{0}", number);
  }
  command += " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
  if (!pipe) return absl::InternalError("popen failed for nvcc");
  std::string log;
  std::array<char, 4096> buffer;
  size_t got;
  while ((got = fread(buffer.data(), 1, buffer.size(), pipe.get())) > 0) log.append(buffer.data(), got);
  const int status = pclose(pipe.release());
  if (status != 0) return absl::InvalidArgumentError(fmt::format("nvcc failed ({}):\n{}", status, log));
  return log;
}

absl::StatusOr<CandidateLibrary> LoadCandidate(const std::string& library_path) {
  CandidateLibrary lib;
  lib.handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib.handle == nullptr) return absl::NotFoundError(fmt::format("dlopen: {}", dlerror()));
  auto resolve = [&](const char* name, auto* out) -> absl::Status {
    *out = reinterpret_cast<std::remove_pointer_t<decltype(out)>>(dlsym(lib.handle, name));
    return *out ? absl::OkStatus() : absl::NotFoundError(fmt::format("{}: missing symbol {}", library_path, name));
  };
  for (absl::Status s : {resolve("sparseditto_prepare", &lib.prepare), resolve("sparseditto_run", &lib.run),
                         resolve("sparseditto_release", &lib.release),
                         resolve("sparseditto_abi_version", &lib.abi_version)}) {
    if (!s.ok()) return s;
  }
  lib.layouts = reinterpret_cast<decltype(lib.layouts)>(dlsym(lib.handle, "sparseditto_layouts"));
  return lib;
}

}  // namespace sparseditto::testing
