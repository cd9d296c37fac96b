// The dispatching half of a composed plan (plan_composer.h): the source text of the one exported ABI
// entry set over the variants sd_plan_v0 ... sd_plan_v<K-1>, as ComposePlanSource places it after them.
// Its behaviour (what prepare, run and release do) is specified in plan_composer.h. The variants must
// have passed ComposePlanSource's checks (non-overlapping ranges); nothing is checked here.
// Pure function; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "mutators/plan/plan_composer.h"

namespace sparseditto {

// defines_layouts[i]: variant i defines sparseditto_layouts (renamed sd_plan_vi_layouts); one per variant.
std::string DispatcherSource(const std::vector<PlanVariant>& variants, const std::vector<bool>& defines_layouts);

}  // namespace sparseditto
