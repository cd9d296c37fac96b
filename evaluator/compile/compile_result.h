// What compiling one candidate produced (stage 2 of the cascade), cached or fresh.
#pragma once

#include <string>
#include <vector>

#include "eval_result.pb.h"

namespace sparseditto {

struct CompileResult {
  bool ok = false;          // the library exists and exports what a candidate must, and nothing worse
  bool timed_out = false;   // nvcc hit the time limit; it and its children were killed
  bool from_cache = false;
  std::string library_path;  // the .so in the cache, when ok
  // Why it failed, one line ("nvcc exited with code 2", "nvcc timed out after 5 s", "the library
  // exports 'malloc' ..."); empty when ok.
  std::string failure;
  std::string log;  // nvcc + ptxas output (stderr merged in order), trimmed to 64 KiB
  std::vector<v1::KernelResources> resources;  // from ptxas -v, one per kernel and arch
  double seconds = 0;  // wall time of the compile (0 when from_cache)
  std::string cache_key;
};

}  // namespace sparseditto
