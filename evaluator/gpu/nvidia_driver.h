// Whether this machine has the NVIDIA driver at all: CUDA's own error on a machine without one is
// "CUDA driver version is insufficient for CUDA runtime version", which sends people to update a
// driver they do not have. Header-only, so that both the runner (cuda_status.cc) and the CPU-side
// search (coordinator/search/gpu_candidate_evaluator.cc) can ask without linking CUDA.
// Thread-safe (reads the file system; dlopen is thread-safe).
#pragma once

#include <dlfcn.h>

#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "fmt/format.h"
#include "fmt/ranges.h"

namespace sparseditto::gpu {

// Where the NVIDIA driver shows itself: its control device, and its user-space library (libcuda.so.1)
// in the usual folders or, with try_loader, wherever the dynamic loader finds it.
struct NvidiaDriverProbe {
  std::vector<std::string> devices = {"/dev/nvidiactl"};
  std::vector<std::string> libraries = {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1",
                                        "/usr/lib/libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1",
                                        "/usr/lib/wsl/lib/libcuda.so.1"};
  bool try_loader = true;  // dlopen("libcuda.so.1") when no file above exists
};

// nullopt when any sign of the driver is found; else the sentence to say, naming what was looked for:
// "no NVIDIA driver was found on this machine (no /dev/nvidiactl, no libcuda.so.1 in ...): ...".
inline std::optional<std::string> MissingNvidiaDriver(const NvidiaDriverProbe& probe = {}) {
  std::error_code error;
  for (const std::string& path : probe.devices) {
    if (std::filesystem::exists(path, error)) return std::nullopt;
  }
  for (const std::string& path : probe.libraries) {
    if (std::filesystem::exists(path, error)) return std::nullopt;
  }
  if (probe.try_loader) {
    if (void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(library);
      return std::nullopt;
    }
  }
  return fmt::format("no NVIDIA driver was found on this machine (no {}, no libcuda.so.1 in {}{}): install the "
                     "NVIDIA driver, or run on a machine with an NVIDIA GPU",
                     fmt::join(probe.devices, ", "), fmt::join(probe.libraries, ", "),
                     probe.try_loader ? " or on the loader's path" : "");
}

}  // namespace sparseditto::gpu
