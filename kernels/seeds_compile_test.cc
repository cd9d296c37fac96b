// Every seed in kernels/seeds/ (LoadSeedLibrary, so a new seed file is covered without editing this
// test) compiles, through the evaluator's compiler with the evaluator's own options for a task on the
// seed's archs (Evaluator::CompileOptionsFor), for every arch its metadata line claims, with no register
// spills in the ptxas report, and whose compiled sparseditto_layouts() mask (dlopen on the CPU) names
// exactly the layouts the seed library reads from its source (DeclaredLayouts, which decides the NK
// tasks it seeds). The library must not be empty.
// CPU only: nvcc, no GPU. One compile per seed for all its archs, two at a time (CompilePool), into a
// fresh cache folder, so nothing is a cache hit.
#include <dlfcn.h>

#include <algorithm>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/compile/compile_pool.h"
#include "evaluator/compile/compile_test_sources.h"
#include "evaluator/evaluator.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "gtest/gtest.h"
#include "kernels/seed_library.h"

namespace sparseditto {
namespace {

constexpr size_t kLogTailBytes = 4000;

std::string Tail(const std::string& log) {
  return log.size() <= kLogTailBytes ? log : "...\n" + log.substr(log.size() - kLogTailBytes);
}

// The layouts the compiled library's mask names (KN only without the symbol), or an error naming why
// the library could not be read.
absl::StatusOr<std::vector<v1::Layout>> CompiledLayouts(const std::string& library_path) {
  void* handle = dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return absl::NotFoundError(fmt::format("dlopen: {}", dlerror()));
  using Mask = uint32_t (*)();
  const auto mask = reinterpret_cast<Mask>(dlsym(handle, "sparseditto_layouts"));
  const uint32_t bits = mask != nullptr ? mask() : 1u;
  std::vector<v1::Layout> layouts;
  for (v1::Layout layout : {v1::LAYOUT_KN, v1::LAYOUT_NK}) {
    if (bits & (1u << layout)) layouts.push_back(layout);
  }
  return layouts;  // the handle stays open: the seed's statics are not trusted to unload
}

// A task on `archs`, for Evaluator::CompileOptionsFor.
v1::Task TaskOn(const std::vector<std::string>& archs) {
  v1::Task task;
  for (const std::string& arch : archs) task.add_arch(arch);
  return task;
}

TEST(SeedsCompileTest, EverySeedCompilesForTheArchsItClaimsWithoutSpills) {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  ASSERT_TRUE(seeds.ok()) << seeds.status();
  ASSERT_FALSE(seeds->empty()) << "no seeds in " SPARSEDITTO_SOURCE_DIR "/kernels/seeds";

  testing::ScratchDir scratch;
  ASSERT_FALSE(scratch.path().empty());
  EvaluatorOptions options;
  options.compiler = {.nvcc = SPARSEDITTO_NVCC, .cache_directory = scratch.path() + "/cache"};
  options.compile.abi_include_dir = SPARSEDITTO_SOURCE_DIR "/kernel_abi";
  options.runner.runner_path = SPARSEDITTO_RUNNER;  // required by Create; no runner is started here
  absl::StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(options);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  const NvccCompiler& compiler = (*evaluator)->compiler();
  CompilePool pool(&compiler, /*num_workers=*/2);

  std::vector<std::future<absl::StatusOr<CompileResult>>> compiles;
  for (const SeedKernel& seed : *seeds) {
    compiles.push_back(pool.Submit(seed.source, (*evaluator)->CompileOptionsFor(TaskOn(seed.archs))));
  }

  for (size_t i = 0; i < seeds->size(); ++i) {
    const SeedKernel& seed = (*seeds)[i];
    const std::string archs = fmt::format("{}", fmt::join(seed.archs, ", "));
    absl::StatusOr<CompileResult> result = compiles[i].get();
    if (!result.ok()) {
      ADD_FAILURE() << "seed " << seed.name << " [" << archs << "]: " << result.status();
      continue;
    }
    if (!result->ok) {
      // Which of the claimed archs fails: compile each alone (only on failure, so CI pays once per seed).
      int failing_archs = 0;
      for (const std::string& arch : seed.archs) {
        absl::StatusOr<CompileResult> alone = compiler.Compile(seed.source, (*evaluator)->CompileOptionsFor(TaskOn({arch})));
        if (alone.ok() && alone->ok) continue;
        ++failing_archs;
        ADD_FAILURE() << "seed " << seed.name << " (" << seed.path << ") does not compile for " << arch << ": "
                      << (alone.ok() ? alone->failure + "\nlog tail:\n" + Tail(alone->log)
                                     : alone.status().ToString());
      }
      if (failing_archs == 0) {
        ADD_FAILURE() << "seed " << seed.name << " compiles for each arch alone, not for [" << archs
                      << "] together: " << result->failure << "\nlog tail:\n" << Tail(result->log);
      }
      continue;
    }
    int max_registers = 0, spilling = 0;
    for (const v1::KernelResources& r : result->resources) {
      max_registers = std::max(max_registers, static_cast<int>(r.registers()));
      if (r.spill_bytes() == 0) continue;
      ++spilling;
      ADD_FAILURE() << "seed " << seed.name << " spills on " << r.arch() << ": " << r.kernel_name() << " ("
                    << r.spill_bytes() << " bytes spill stores, " << r.registers() << " registers, "
                    << r.stack_bytes() << " bytes stack)";
    }
    absl::StatusOr<std::vector<v1::Layout>> layouts = CompiledLayouts(result->library_path);
    if (!layouts.ok()) {
      ADD_FAILURE() << "seed " << seed.name << ": " << layouts.status();
    } else {
      EXPECT_EQ(*layouts, seed.layouts) << "seed " << seed.name << ": the compiled sparseditto_layouts() mask and the "
                                        << "layouts read from the source (kernels/seed_library.h) differ";
    }
    std::cout << fmt::format("[ seed     ] {:<20} [{}] compiled in {:.1f} s, {} kernel records, max {} registers, {}\n",
                             seed.name, archs, result->seconds, result->resources.size(), max_registers,
                             spilling == 0 ? "no spills" : fmt::format("{} SPILL", spilling));
  }
}

}  // namespace
}  // namespace sparseditto
