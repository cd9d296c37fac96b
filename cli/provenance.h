// What a run records about where it ran, so a result can be reproduced: the GPU and its driver
// (nvidia-smi), the CUDA version and compiler (nvcc --version), the project revision baked in at
// configure time (git describe), the host, and the mutator models of the tasks. Stored in the run
// record when a run is created; runs/<run>/provenance.json is written from there.
// Probes that fail (no GPU, no nvidia-smi) are recorded as "unknown: <why>", never as errors.
// Thread-safety: runs child processes; call from one thread.
#pragma once

#include <string>
#include <vector>

#include "task.pb.h"

namespace sparseditto {

// `git describe --always --dirty` of the source tree when the build was configured, or "unknown".
std::string ProjectRevision();

// A JSON object (text): gpu, driver, cuda, nvcc, project_revision, host, mutator_models (per task), and
// fake_evaluator when `fake_evaluator_note` is not empty (a run scored by a test seam, not by a GPU).
std::string CollectProvenance(const std::vector<v1::Task>& tasks, const std::string& nvcc,
                              const std::string& fake_evaluator_note = "");

}  // namespace sparseditto
