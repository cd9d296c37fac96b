// How the static screen gets the translation unit the host compiler will see (issue 23 item 7).
//
// `nvcc -E` preprocesses for the device (it defines __CUDA_ARCH__ for the first arch), but a
// candidate's host code is what runs in the runner, so the screen needs the host pass. nvcc's host
// pass differs from its -E pass only by the device-only macros, so -E with those undefined through
// -Xcompiler (gcc applies -D and -U in order, and nvcc puts -Xcompiler options after its own -D's) is
// the host pass: the same flags, include paths, -include cuda_runtime.h and __CUDA_ARCH_LIST__.
// host_preprocess_test checks this against `nvcc --dryrun` for several arch sets, so a toolkit that
// adds a device-only macro fails the test instead of opening a gap.
// Pure functions; thread-safe. NvccCompiler::PreprocessHost (nvcc_compiler.h) runs it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace sparseditto {

class NvccCompiler;
struct CompileOptions;

// What preprocessing a candidate gave. ok: `text` is the translation unit (main file "candidate.cu").
// Otherwise the candidate does not preprocess (and so does not compile): `log` says why, `timed_out`
// when the time limit ended it.
struct PreprocessResult {
  bool ok = false;
  bool timed_out = false;
  std::string text;
  std::string log;
};

// Macros nvcc defines for a device pass and not for the host pass, for these archs
// ("sm_90a" -> __CUDA_ARCH_FEAT_SM90_ALL among them).
std::vector<std::string> DeviceOnlyMacros(const std::vector<std::string>& archs);

// What follows NvccFlags in the preprocessing command: -E, -Xcompiler -U<macro>,... for each
// DeviceOnlyMacros, -o candidate.ii candidate.cu.
std::vector<std::string> HostPreprocessArguments(const std::vector<std::string>& archs);

// Stage 1 whole: ScreenCandidateSource on the spelling, then, when that passes, ScreenPreprocessedSource
// on compiler.PreprocessHost(source, options). PermissionDenied: refused, also when preprocessing
// ran out of time. A source that does not preprocess, and a harness error of the preprocessing,
// pass here: the compile with the same options fails the same way and says why. *settled (when given)
// says whether the verdict is a function of the source and options alone (the spelling refused, or
// the preprocessed unit was screened, or the source does not preprocess), so that a caller may
// remember it; a harness error or a timeout is not settled.
absl::Status ScreenCandidate(const NvccCompiler& compiler, std::string_view source, const CompileOptions& options,
                             bool* settled = nullptr);

}  // namespace sparseditto
