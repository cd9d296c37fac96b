// Internal to evaluator/gpu: the factories of the concrete baselines (one .cc each). Use
// MakeBaselines (baseline.h) instead. Creating one touches no GPU; Prepare does.
#pragma once

#include <memory>

#include "evaluator/gpu/baseline.h"

namespace sparseditto::gpu {

std::unique_ptr<Baseline> NewCublasDenseBaseline();
std::unique_ptr<Baseline> NewCusparseCsrBaseline();
std::unique_ptr<Baseline> NewCusparseBsrBaseline();
std::unique_ptr<Baseline> NewCusparseBlockedEllBaseline();
std::unique_ptr<Baseline> NewCusparseLt2to4Baseline();

}  // namespace sparseditto::gpu
