// Where the sparseditto binary finds its companions: the runner child, the kernel ABI header and the
// caches. A build tree has them at build/bin/sparseditto-runner and <source>/kernel_abi; a package
// made by scripts/package_gpu.sh at bin/sparseditto-runner and share/sparseditto/.
#pragma once

#include <string>

#include "absl/status/status.h"

#include "evaluator/evaluator.h"

namespace sparseditto {

// $SPARSEDITTO_RUNNER, else sparseditto-runner beside this executable.
std::string RunnerPath();

// $SPARSEDITTO_ABI_DIR, else <exe dir>/../share/sparseditto when it holds sparseditto_kernel.h, else
// the source tree's kernel_abi/ the binary was built from.
std::string AbiIncludeDir();

// Copies the headers an exported kernel includes (sparseditto_kernel.h and sparseditto_weight_check.h,
// from AbiIncludeDir()) into `out_dir`, replacing older copies, and makes `out_dir`/build.sh executable
// when it is there. Errors: FailedPrecondition naming the file that could not be copied or chmod'ed.
absl::Status InstallExportCompanions(const std::string& out_dir);

// $SPARSEDITTO_SEEDS, else <exe dir>/../share/sparseditto/seeds when present, else the source tree's
// kernels/seeds.
std::string SeedLibraryDir();

// $SPARSEDITTO_PROMPTS, else <exe dir>/../share/sparseditto/prompts when present, else the source
// tree's configs/prompts (the LLM mutators' system.txt and user.txt).
std::string PromptsDir();

// $SPARSEDITTO_CACHE, else $XDG_CACHE_HOME/sparseditto, else ~/.cache/sparseditto.
std::string DefaultCacheDir();

// Evaluator options for this installation: caches under `cache_dir` (DefaultCacheDir() when empty),
// the ABI header and runner found as above, and the command line's timing choices.
EvaluatorOptions InstalledEvaluatorOptions(const std::string& cache_dir, double stage_timeout_seconds,
                                           double timing_seconds_per_n, int min_trials);

// Before a command compiles or runs untrusted candidates (issue 23 item 6): probes the sandbox layers
// (ProbeSandboxLayers, as `doctor` does, against RunnerPath()) and refuses with FailedPrecondition
// naming every needed layer that is off, unless SPARSEDITTO_ALLOW_MISSING_LAYERS=1, when the missing
// ones are named on stderr and the command goes on. Forks: call before the command starts threads.
absl::Status RequireSandboxLayers(const char* command);

}  // namespace sparseditto
