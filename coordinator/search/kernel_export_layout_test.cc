// Exports and the activation layout (issue 26 item 2): the header tells an NK task's caller to pass
// X [n x K] and Y [n x M] with problem.layout = SD_LAYOUT_NK; the built library exports <task>_layouts
// (the kernel's mask, KN only for a kernel without one) and <task>_prepare refuses a layout the mask
// lacks with a message, before the kernel runs (so no GPU is needed to see it). Real nvcc, dlopen.
#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "coordinator/search/export_wrapper.h"
#include "coordinator/search/kernel_export.h"
#include "coordinator/testing/export_build.h"
#include "fmt/format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels/seed_library.h"
#include "tests/testing/shell_command.h"
#include "tests/testing/temp_folder.h"
#define SPARSEDITTO_HARNESS
#include "sparseditto_kernel.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

std::string SeedSource(const std::string& name) {
  absl::StatusOr<std::vector<SeedKernel>> seeds = LoadSeedLibrary(SPARSEDITTO_SOURCE_DIR "/kernels/seeds");
  EXPECT_TRUE(seeds.ok()) << seeds.status();
  for (const SeedKernel& s : seeds.ok() ? *seeds : std::vector<SeedKernel>()) {
    if (s.name == name) return s.source;
  }
  ADD_FAILURE() << "no seed " << name;
  return "";
}

v1::Task DenseTask(const std::string& name, v1::Layout layout) {
  v1::Task task;
  task.set_name(name);
  task.set_dtype(v1::DTYPE_FP16);
  task.mutable_pattern()->set_family(v1::PATTERN_FAMILY_UNSTRUCTURED);
  task.set_layout(layout);
  task.add_n(16);
  task.add_arch("sm_90");
  return task;
}

TEST(KernelExportLayout, TheLibraryExportsEachKernelsMaskAndPrepareRefusesOtherLayouts) {
  struct Export {
    std::string name, seed;
    v1::Layout layout;
    uint32_t mask;
  };
  const Export exports[] = {{"torch_nk", "dense_cublas", v1::LAYOUT_NK, 3u},
                            {"stream_nk", "u14_stream_sp", v1::LAYOUT_NK, 3u},  // a sparse seed that takes NK
                            {"rows_kn", "csr_warp_per_row", v1::LAYOUT_KN, 1u}};
  testing_support::TempFolder scratch("kernel_export_layout_test");
  ASSERT_TRUE(scratch.ok());
  std::vector<ExportedFile> files;
  for (const Export& e : exports) {
    const v1::Task task = DenseTask(e.name, e.layout);
    v1::Candidate best;
    best.set_id(e.name + ".000001");
    best.set_source(SeedSource(e.seed));
    CsrMatrix searched;
    searched.rows = searched.cols = 4;
    absl::StatusOr<std::string> file = ExportedKernel(store::RunRecord(), task, best, v1::EvalResult(), searched);
    ASSERT_TRUE(file.ok()) << file.status();
    if (e.layout == v1::LAYOUT_NK) {
      EXPECT_THAT(*file, HasSubstr("problem.layout = SD_LAYOUT_NK;"));
      EXPECT_THAT(*file, HasSubstr("B: device X [n x K] row-major (PyTorch's activations), C: device Y [n x M]"));
      EXPECT_THAT(*file, HasSubstr("; layout nk"));
    }
    std::ofstream(scratch.path() / (e.name + ".cu")) << *file;
    files.push_back({e.name + ".cu", ExportNvccFlags(task).value()});
  }
  const auto built = testing::BuildExports(scratch.path(), files, "liblayouts.so");
  ASSERT_TRUE(std::filesystem::exists(scratch.path() / "liblayouts.so")) << built.out << built.err;
  void* library = dlopen((scratch.path() / "liblayouts.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr) << dlerror();

  const testing::IdentityWeight weight;  // a weight the check passes: 4 x 4 fp16 unstructured
  for (const Export& e : exports) {
    SCOPED_TRACE(e.name);
    auto layouts = reinterpret_cast<decltype(&sparseditto_layouts)>(dlsym(library, (e.name + "_layouts").c_str()));
    auto prepare = reinterpret_cast<decltype(&sparseditto_prepare)>(dlsym(library, (e.name + "_prepare").c_str()));
    ASSERT_NE(layouts, nullptr);
    ASSERT_NE(prepare, nullptr);
    EXPECT_EQ(layouts(), e.mask);
    sd_problem problem = weight.Problem(SD_DTYPE_FP16);
    // A layout outside the mask (NK for the KN-only kernel; a number no layout has for both).
    for (int32_t layout : {e.mask == 1u ? int32_t{SD_LAYOUT_NK} : 7, -1, 40}) {
      problem.layout = layout;
      void* state = nullptr;
      char error[256] = "";
      EXPECT_EQ(prepare(&problem, &state, error, sizeof error), 1) << "layout " << layout;
      EXPECT_THAT(std::string(error), HasSubstr(fmt::format("layout {}: this kernel serves the layouts of mask {:#x}",
                                                            layout, e.mask)));
    }
  }
  dlclose(library);
}

}  // namespace
}  // namespace sparseditto
