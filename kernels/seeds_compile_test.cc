// Every seed in kernels/seeds/ (LoadSeedLibrary, so a new seed file is covered without editing this
// test) compiles, through the evaluator's compiler with the evaluator's own options for a task on the
// seed's archs (Evaluator::CompileOptionsFor), for every arch and every dtype its metadata line claims
// (one dtype for a seed that does not guard its dtypes: the define changes nothing there), with no
// register spills in the ptxas report, and whose compiled sparseditto_layouts() mask (dlopen on the CPU)
// names exactly the layouts the seed library reads from its source (DeclaredLayouts, which decides the NK
// tasks it seeds). The library must not be empty. A seed that guards its dtypes (SPARSEDITTO_BUILDS_DTYPE,
// kernel_abi/sparseditto_kernel.h) must build device kernels of the task's dtype only: the kernel names in
// the library's device code are read (DeviceKernelNames).
// CPU only: nvcc, no GPU. One compile per seed and dtype for all its archs, two at a time
// (CompilePool), into a fresh cache folder, so nothing is a cache hit.
#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>
#include <string_view>
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

// A task on `archs` in `dtype` and `layout`, for Evaluator::CompileOptionsFor.
v1::Task TaskOn(const std::vector<std::string>& archs, v1::Dtype dtype, v1::Layout layout = v1::LAYOUT_KN) {
  v1::Task task;
  for (const std::string& arch : archs) task.add_arch(arch);
  task.set_dtype(dtype);
  task.set_layout(layout);
  return task;
}

bool GuardsItsDtypes(const SeedKernel& seed) {
  return seed.source.find("SPARSEDITTO_BUILDS_DTYPE") != std::string::npos;
}

// The kernel names in the device code (the cubins nvcc embeds) of the shared library at `path`: each
// kernel has a ".nv.info.<mangled name>" section, whose name is found in the library's bytes. (cuobjdump
// would list them too, but it is not part of every CUDA install this test runs on.) Assumes an
// uncompressed fat binary, as nvcc makes with the evaluator's flags: a compressed one shows no names,
// which the caller notices (no kernel found).
absl::StatusOr<std::vector<std::string>> DeviceKernelNames(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("cannot read " + path);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  constexpr std::string_view kPrefix = ".nv.info.";
  std::set<std::string> names;
  for (size_t at = bytes.find(kPrefix); at != std::string::npos; at = bytes.find(kPrefix, at + 1)) {
    const size_t begin = at + kPrefix.size(), end = bytes.find('\0', begin);
    if (end != std::string::npos && end > begin) names.insert(bytes.substr(begin, end - begin));
  }
  return std::vector<std::string>(names.begin(), names.end());
}

// Device kernels of the library at `path` whose names carry a 16-bit element type other than `dtype`'s
// (for fp32: either 16-bit type), with how many kernel names were read at all.
struct ForeignKernels {
  std::vector<std::string> names;
  size_t kernels = 0;
};
ForeignKernels KernelsOfOtherDtypes(const std::string& path, v1::Dtype dtype) {
  ForeignKernels found;
  absl::StatusOr<std::vector<std::string>> kernels = DeviceKernelNames(path);
  if (!kernels.ok()) {
    found.names.push_back(std::string(kernels.status().message()));
    return found;
  }
  found.kernels = kernels->size();
  for (const std::string& name : *kernels) {
    for (const auto& [type, mangled] : {std::pair{v1::DTYPE_FP16, "6__half"}, std::pair{v1::DTYPE_BF16, "13__nv_bfloat16"}}) {
      if (type != dtype && name.find(mangled) != std::string::npos) found.names.push_back(name);
    }
  }
  return found;
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

  struct Build {
    const SeedKernel* seed;
    v1::Dtype dtype;
    v1::Layout layout;
    std::future<absl::StatusOr<CompileResult>> result;
  };
  std::vector<Build> builds;
  for (const SeedKernel& seed : *seeds) {
    EXPECT_FALSE(seed.dtypes.empty()) << seed.name << " claims no dtype";
    // A seed that does not guard its dtypes builds the same code whatever the task's dtype: once is enough.
    const size_t dtypes = GuardsItsDtypes(seed) ? seed.dtypes.size() : std::min<size_t>(1, seed.dtypes.size());
    for (const v1::Dtype dtype : std::vector<v1::Dtype>(seed.dtypes.begin(), seed.dtypes.begin() + dtypes)) {
      builds.push_back({&seed, dtype, v1::LAYOUT_KN,
                        pool.Submit(seed.source, (*evaluator)->CompileOptionsFor(TaskOn(seed.archs, dtype)))});
    }
    // A seed that takes NK is built as an NK task builds it too (SPARSEDITTO_BUILDS_LAYOUT: its NK code alone).
    if (std::find(seed.layouts.begin(), seed.layouts.end(), v1::LAYOUT_NK) != seed.layouts.end() && !seed.dtypes.empty()) {
      const v1::Dtype dtype = seed.dtypes.front();
      builds.push_back({&seed, dtype, v1::LAYOUT_NK,
                        pool.Submit(seed.source, (*evaluator)->CompileOptionsFor(TaskOn(seed.archs, dtype, v1::LAYOUT_NK)))});
    }
  }

  for (Build& build : builds) {
    const SeedKernel& seed = *build.seed;
    const v1::Dtype dtype = build.dtype;
    const v1::Layout layout = build.layout;
    const std::string archs = fmt::format("{}", fmt::join(seed.archs, ", "));
    absl::StatusOr<CompileResult> result = build.result.get();
    if (!result.ok()) {
      ADD_FAILURE() << "seed " << seed.name << " [" << archs << "] " << v1::Dtype_Name(dtype) << " "
                    << v1::Layout_Name(layout) << ": " << result.status();
      continue;
    }
    if (!result->ok) {
      // Which of the claimed archs fails: compile each alone (only on failure, so CI pays once per seed).
      int failing_archs = 0;
      for (const std::string& arch : seed.archs) {
        absl::StatusOr<CompileResult> alone =
            compiler.Compile(seed.source, (*evaluator)->CompileOptionsFor(TaskOn({arch}, dtype, layout)));
        if (alone.ok() && alone->ok) continue;
        ++failing_archs;
        ADD_FAILURE() << "seed " << seed.name << " (" << seed.path << ") does not compile for " << arch << " in "
                      << v1::Dtype_Name(dtype) << ": "
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
    const bool guarded = GuardsItsDtypes(seed);
    const ForeignKernels foreign = KernelsOfOtherDtypes(result->library_path, dtype);
    if (guarded) {
      EXPECT_TRUE(foreign.names.empty()) << "seed " << seed.name << " built for " << v1::Dtype_Name(dtype)
                                         << " has kernels of other dtypes: " << fmt::format("{}", fmt::join(foreign.names, ", "));
      // The scan sees device code at all: every guarded seed but the cuBLAS ones has kernels.
      EXPECT_GT(foreign.kernels, 0u) << "no device kernel names read from " << seed.name << "'s library";
    }
    absl::StatusOr<std::vector<v1::Layout>> layouts = CompiledLayouts(result->library_path);
    if (!layouts.ok()) {
      ADD_FAILURE() << "seed " << seed.name << ": " << layouts.status();
    } else {
      EXPECT_EQ(*layouts, seed.layouts) << "seed " << seed.name << ": the compiled sparseditto_layouts() mask and the "
                                        << "layouts read from the source (kernels/seed_library.h) differ";
    }
    std::cout << fmt::format("[ seed     ] {:<20} [{}] {:<10} {} compiled in {:.1f} s, {} kernel records, max {} "
                             "registers, {}, {} device kernels{}\n",
                             seed.name, archs, v1::Dtype_Name(dtype), v1::Layout_Name(layout), result->seconds, result->resources.size(),
                             max_registers, spilling == 0 ? "no spills" : fmt::format("{} SPILL", spilling),
                             foreign.kernels, guarded ? " (task's dtype only)" : "");
  }
}

}  // namespace
}  // namespace sparseditto
