#include "mutators/plan/plan_dispatcher.h"

#include "fmt/format.h"

namespace sparseditto {
namespace {

// The parts that do not depend on the variants. kVariants, kNames, VariantOf and the four Call*
// switches come before them.
constexpr const char* kEntry = R"(
struct PlanState {
  void* state[kVariants];
  bool prepared[kVariants];
};

void ReleasePrepared(PlanState* plan) {
  for (int v = 0; v < kVariants; ++v) {
    if (plan->prepared[v]) CallRelease(v, plan->state[v]);
  }
  delete plan;
}

}  // namespace sd_plan_dispatch

// What every variant supports: the harness hands the plan only a layout all of them serve.
SPARSEDITTO_EXPORT uint32_t sparseditto_layouts(void) {
  uint32_t mask = ~0u;
  for (int v = 0; v < sd_plan_dispatch::kVariants; ++v) mask &= sd_plan_dispatch::CallLayouts(v);
  return mask;
}

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* problem, void** state, char* error, size_t error_capacity) {
  using namespace sd_plan_dispatch;
  PlanState* plan = new (std::nothrow) PlanState();
  const int32_t count = problem->num_n_values > 0 ? problem->num_n_values : 0;
  int64_t* mine = new (std::nothrow) int64_t[count > 0 ? count : 1];
  if (plan == nullptr || mine == nullptr) {
    delete plan;
    delete[] mine;
    if (error != nullptr && error_capacity > 0) std::snprintf(error, error_capacity, "plan: out of host memory");
    return 1;
  }
  for (int v = 0; v < kVariants; ++v) {
    int32_t served = 0;
    for (int32_t i = 0; i < count; ++i) {
      if (VariantOf(problem->n_values[i]) == v) mine[served++] = problem->n_values[i];
    }
    if (served == 0) continue;
    sd_problem part = *problem;
    part.n_values = mine;
    part.num_n_values = served;
    char reason[1024] = {0};
    const int rc = CallPrepare(v, &part, &plan->state[v], reason, sizeof reason);
    if (rc != 0) {
      reason[sizeof reason - 1] = '\0';
      delete[] mine;
      ReleasePrepared(plan);
      if (error != nullptr && error_capacity > 0) {
        std::snprintf(error, error_capacity, "plan variant %d (%s): %s", v, kNames[v], reason);
      }
      return rc;
    }
    plan->prepared[v] = true;
  }
  delete[] mine;
  *state = plan;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* B, void* C, int64_t n, cudaStream_t stream) {
  using namespace sd_plan_dispatch;
  PlanState* plan = static_cast<PlanState*>(state);
  const int v = VariantOf(n);
  if (plan == nullptr || v < 0 || !plan->prepared[v]) return 1;
  return CallRun(v, plan->state[v], B, C, n, stream);
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  if (state != nullptr) sd_plan_dispatch::ReleasePrepared(static_cast<sd_plan_dispatch::PlanState*>(state));
}
)";

}  // namespace

std::string DispatcherSource(const std::vector<PlanVariant>& variants, const std::vector<bool>& defines_layouts) {
  std::string names, variant_of, prepare, run, release, layouts;
  for (size_t i = 0; i < variants.size(); ++i) {
    names += fmt::format("{}\"{}\"", i == 0 ? "" : ", ", variants[i].name);
    for (const NRange& r : variants[i].serves) {
      variant_of += fmt::format("  if (n >= {} && n <= {}) return {};\n", r.min_n, r.max_n, i);
    }
    const std::string ns = fmt::format("sd_plan_v{}::sd_plan_v{}", i, i);
    prepare += fmt::format("    case {}: return {}_prepare(problem, state, error, capacity);\n", i, ns);
    run += fmt::format("    case {}: return {}_run(state, B, C, n, stream);\n", i, ns);
    release += fmt::format("    case {}: {}_release(state); return;\n", i, ns);
    if (i < defines_layouts.size() && defines_layouts[i]) layouts += fmt::format("    case {}: return {}_layouts();\n", i, ns);
  }
  std::string out = "\nnamespace sd_plan_dispatch {\n";
  out += fmt::format("constexpr int kVariants = {};\n", variants.size());
  out += fmt::format("const char* const kNames[kVariants] = {{{}}};\n\n", names);
  out += "// The variant serving n, or -1.\nint VariantOf(int64_t n) {\n" + variant_of + "  return -1;\n}\n\n";
  out += "int CallPrepare(int v, const sd_problem* problem, void** state, char* error, size_t capacity) {\n"
         "  switch (v) {\n" + prepare + "  }\n  return 1;\n}\n\n";
  out += "int CallRun(int v, void* state, const void* B, void* C, int64_t n, cudaStream_t stream) {\n"
         "  switch (v) {\n" + run + "  }\n  return 1;\n}\n\n";
  out += "void CallRelease(int v, void* state) {\n  switch (v) {\n" + release + "  }\n}\n\n";
  out += "// A variant without sparseditto_layouts() serves KN only (sparseditto_kernel.h).\n"
         "uint32_t CallLayouts(int v) {\n  switch (v) {\n" + layouts +
         "    default: return SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN);\n  }\n}\n";
  return out + kEntry;
}

}  // namespace sparseditto
