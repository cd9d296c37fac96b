// The PyTorch operators of a SparseDitto kernel package (written by `sparseditto export RUN --torch`).
// Generic: the same file in every package. It loads an exported kernel's shared library at run time
// (dlopen) and calls its ABI entries (kernel_abi/sparseditto_kernel.h) under `symbol_prefix`, so the
// kernels of many tasks and runs are served by one copy of these operators.
//
//   sparseditto::prepare(library, symbol_prefix, rows, cols, row_offsets, col_indices, values,
//                        n_values, dtype, pattern, sparsity, device, layout=0) -> int handle
//       Resolves <prefix>prepare/run/release in `library`, calls prepare with the host CSR (int32
//       offsets and indices, fp32 values, all CPU tensors) in `layout` (sd_layout: 0 KN, 1 NK; refused
//       unless <prefix>layouts, where the library has it, names it) and keeps the state under a new handle.
//   sparseditto::release(int handle) -> ()
//       Calls the kernel's release and closes the library; an unknown handle is an error.
//   sparseditto::spmm(Tensor x, int handle, int out_features) -> Tensor
//       Y = X * A^T for X [n x K] (any strides) on the prepared CUDA device: B = X^T is made K x n
//       row-major (x.t().contiguous(): no copy when x is already column-major, e.g. the output of a
//       previous spmm), C = A * B is M x n row-major, and Y = C^T is returned as an [n x M] view with
//       strides (1, n). n must be one of the prepared n values; n = 0 returns an empty tensor.
//       Device work goes to the current stream; no host synchronisation and no allocation outside
//       the caching allocator, so it can be captured in a CUDA graph. For a kernel prepared in KN.
//   sparseditto::spmm_nk(Tensor x, int handle, int out_features) -> Tensor
//       The same for a kernel prepared in NK (PyTorch's Linear layout): the kernel reads X [n x K]
//       row-major as it is (x.contiguous(): no copy for the usual contiguous activations) and writes
//       Y [n x M] row-major, a contiguous tensor: no copy on either side.
//
// Build flags: SPARSEDITTO_WITH_CUDA (a CUDA build of torch) registers spmm's CUDA kernel;
// SPARSEDITTO_CPP_META registers its Meta kernel in C++ (torch without torch.library.register_fake /
// impl_abstract; newer torch gets the fake function from the Python package instead, as two
// registrations would clash). Errors are raised as c10::Error (RuntimeError in Python), never crashes.
// Thread-safety: the handle table is guarded by a mutex; a kernel state is used by whichever thread
// calls spmm, as the ABI allows (run only reads its state).
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/ATen.h>
#include <torch/library.h>

#ifdef SPARSEDITTO_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#endif

#define SPARSEDITTO_HARNESS  // declarations only: the kernel library defines the entries
#include "sparseditto_kernel.h"

namespace {

using PrepareFn = int (*)(const sd_problem*, void**, char*, size_t);
using RunFn = int (*)(void*, const void*, void*, int64_t, cudaStream_t);
using ReleaseFn = void (*)(void*);
using AbiVersionFn = int (*)();
using LayoutsFn = uint32_t (*)();

// One prepared kernel: its library, entries and state. Releases the state and closes the library
// when the last reference goes (release() drops the table's; an spmm in flight holds another).
struct Kernel {
  void* library = nullptr;
  RunFn run = nullptr;
  ReleaseFn release = nullptr;
  void* state = nullptr;
  int64_t rows = 0, cols = 0, device = 0;
  int32_t layout = SD_LAYOUT_KN;  // what run's B and C are (sd_layout): spmm serves KN, spmm_nk NK
  at::ScalarType dtype = at::kHalf;
  std::vector<int64_t> n_values;
  std::string name;  // library and prefix, for messages

  ~Kernel() {
    if (state != nullptr && release != nullptr) release(state);
    if (library != nullptr) dlclose(library);
  }
};

std::mutex table_mutex;
std::unordered_map<int64_t, std::shared_ptr<Kernel>> table;  // guarded by table_mutex
int64_t next_handle = 1;                                     // guarded by table_mutex

std::shared_ptr<Kernel> Find(int64_t handle) {
  std::lock_guard<std::mutex> lock(table_mutex);
  auto it = table.find(handle);
  TORCH_CHECK(it != table.end(), "sparseditto: no prepared kernel with handle ", handle,
              " (released, or never prepared in this process)");
  return it->second;
}

at::ScalarType DtypeOf(int64_t abi_dtype) {
  switch (abi_dtype) {
    case SD_DTYPE_FP32: return at::kFloat;
    case SD_DTYPE_FP16: return at::kHalf;
    case SD_DTYPE_BF16: return at::kBFloat16;
  }
  TORCH_CHECK(false, "sparseditto::prepare: dtype ", abi_dtype, " is not an sd_dtype (1 fp32, 2 fp16, 3 bf16)");
}

void* Entry(void* library, const std::string& symbol, const std::string& where) {
  dlerror();
  void* fn = dlsym(library, symbol.c_str());
  TORCH_CHECK(fn != nullptr, "sparseditto::prepare: ", where, " has no symbol ", symbol,
              " (is the symbol prefix right? the package's kernels.json names it)");
  return fn;
}

void CheckCsr(const at::Tensor& t, at::ScalarType type, int64_t count, const char* what) {
  TORCH_CHECK(t.device().is_cpu() && t.scalar_type() == type && t.dim() == 1 && t.is_contiguous(),
              "sparseditto::prepare: ", what, " must be a contiguous 1-D CPU tensor of ", type);
  TORCH_CHECK(t.numel() == count, "sparseditto::prepare: ", what, " has ", t.numel(), " entries, expected ", count);
}

int64_t Prepare(const std::string& library, const std::string& prefix, int64_t rows, int64_t cols,
                const at::Tensor& row_offsets, const at::Tensor& col_indices, const at::Tensor& values,
                std::vector<int64_t> n_values, int64_t dtype, std::vector<int64_t> pattern, double sparsity,
                int64_t device, int64_t layout) {
  TORCH_CHECK(layout == SD_LAYOUT_KN || layout == SD_LAYOUT_NK, "sparseditto::prepare: layout ", layout,
              " is not an sd_layout (0 KN, 1 NK)");
  TORCH_CHECK(rows > 0 && cols > 0, "sparseditto::prepare: rows and cols must be positive");
  CheckCsr(row_offsets, at::kInt, rows + 1, "row_offsets");
  const int64_t nnz = values.numel();
  CheckCsr(col_indices, at::kInt, nnz, "col_indices");
  CheckCsr(values, at::kFloat, nnz, "values");
  TORCH_CHECK(pattern.size() == 7, "sparseditto::prepare: pattern holds family, block_rows, block_cols, n, m, "
              "half_bandwidth, num_blocks (7 ints), got ", pattern.size());
  TORCH_CHECK(!n_values.empty(), "sparseditto::prepare: no n values");
  for (int64_t n : n_values) TORCH_CHECK(n > 0, "sparseditto::prepare: n values must be positive, got ", n);

  auto kernel = std::make_shared<Kernel>();
  kernel->name = library + " (" + prefix + "*)";
  kernel->rows = rows, kernel->cols = cols, kernel->device = device, kernel->dtype = DtypeOf(dtype);
  kernel->n_values = n_values;
  kernel->library = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  TORCH_CHECK(kernel->library != nullptr, "sparseditto::prepare: cannot load ", library, ": ", dlerror());
  auto prepare = reinterpret_cast<PrepareFn>(Entry(kernel->library, prefix + "prepare", library));
  kernel->run = reinterpret_cast<RunFn>(Entry(kernel->library, prefix + "run", library));
  auto release = reinterpret_cast<ReleaseFn>(Entry(kernel->library, prefix + "release", library));
  if (auto version = reinterpret_cast<AbiVersionFn>(dlsym(kernel->library, (prefix + "abi_version").c_str()))) {
    TORCH_CHECK(version() == SPARSEDITTO_ABI_VERSION, "sparseditto::prepare: ", library, " was built for kernel ABI ",
                version(), ", this package speaks ", SPARSEDITTO_ABI_VERSION);
  }
  // A kernel is handed only a layout its mask names (sparseditto_kernel.h); none: KN only.
  const auto layouts = reinterpret_cast<LayoutsFn>(dlsym(kernel->library, (prefix + "layouts").c_str()));
  const uint32_t mask = layouts != nullptr ? layouts() : SPARSEDITTO_LAYOUT_BIT(SD_LAYOUT_KN);
  TORCH_CHECK((mask & SPARSEDITTO_LAYOUT_BIT(layout)) != 0, "sparseditto::prepare: ", kernel->name,
              " does not serve layout ", layout == SD_LAYOUT_NK ? "nk" : "kn", " (its ", prefix, "layouts() mask is ",
              mask, "; kernels.json names the layout the kernel was searched in)");
  kernel->layout = static_cast<int32_t>(layout);

  sd_problem problem = {};
  problem.abi_version = SPARSEDITTO_ABI_VERSION;
  problem.dtype = static_cast<int32_t>(dtype);
  problem.rows = rows, problem.cols = cols, problem.nnz = nnz;
  problem.pattern.family = static_cast<int32_t>(pattern[0]);
  problem.pattern.sparsity = static_cast<float>(sparsity);
  problem.pattern.block_rows = static_cast<int32_t>(pattern[1]);
  problem.pattern.block_cols = static_cast<int32_t>(pattern[2]);
  problem.pattern.n = static_cast<int32_t>(pattern[3]);
  problem.pattern.m = static_cast<int32_t>(pattern[4]);
  problem.pattern.half_bandwidth = static_cast<int32_t>(pattern[5]);
  problem.pattern.num_blocks = static_cast<int32_t>(pattern[6]);
  problem.row_offsets = row_offsets.data_ptr<int32_t>();
  problem.col_indices = col_indices.data_ptr<int32_t>();
  problem.values = values.data_ptr<float>();
  problem.n_values = kernel->n_values.data();
  problem.num_n_values = static_cast<int32_t>(kernel->n_values.size());
  problem.device = static_cast<int32_t>(device);
  problem.layout = static_cast<int32_t>(layout);

  char error[1024] = {};
  int rc;
  {
#ifdef SPARSEDITTO_WITH_CUDA
    c10::cuda::CUDAGuard guard(static_cast<c10::DeviceIndex>(device));  // the ABI: device is current
#endif
    rc = prepare(&problem, &kernel->state, error, sizeof error - 1);
  }
  if (rc != 0) {
    kernel->state = nullptr;  // the ABI: release is not called after a failed prepare
    TORCH_CHECK(false, "sparseditto::prepare: ", kernel->name, " refused the weight: ",
                error[0] != '\0' ? error : "(no reason given)");
  }
  kernel->release = release;
  std::lock_guard<std::mutex> lock(table_mutex);
  const int64_t handle = next_handle++;
  table.emplace(handle, std::move(kernel));
  return handle;
}

void Release(int64_t handle) {
  std::shared_ptr<Kernel> kernel;
  {
    std::lock_guard<std::mutex> lock(table_mutex);
    auto it = table.find(handle);
    TORCH_CHECK(it != table.end(), "sparseditto::release: no prepared kernel with handle ", handle);
    kernel = std::move(it->second);
    table.erase(it);
  }
  // ~Kernel runs here (outside the lock), or after an spmm still holding it returns.
}

// Checks shared by the real and the meta kernel of spmm (KN) and spmm_nk (NK); returns n.
int64_t CheckSpmm(const at::Tensor& x, const Kernel* kernel, int64_t out_features, int32_t layout = SD_LAYOUT_KN) {
  TORCH_CHECK(x.dim() == 2, "sparseditto::spmm: x must be 2-D [n, K], got ", x.dim(), "-D");
  TORCH_CHECK(out_features > 0, "sparseditto::spmm: out_features must be positive");
  if (kernel == nullptr) return x.size(0);
  TORCH_CHECK(kernel->layout == layout, "sparseditto::", layout == SD_LAYOUT_NK ? "spmm_nk" : "spmm", ": ",
              kernel->name, " was prepared in layout ", kernel->layout == SD_LAYOUT_NK ? "nk: call spmm_nk" : "kn: call spmm");
  TORCH_CHECK(out_features == kernel->rows, "sparseditto::spmm: out_features ", out_features, " but the kernel has ",
              kernel->rows, " rows");
  TORCH_CHECK(x.size(1) == kernel->cols, "sparseditto::spmm: x has ", x.size(1), " columns, the kernel's K is ",
              kernel->cols);
  TORCH_CHECK(x.scalar_type() == kernel->dtype, "sparseditto::spmm: x is ", x.scalar_type(), ", the kernel takes ",
              kernel->dtype);
  const int64_t n = x.size(0);
  TORCH_CHECK(n == 0 || std::find(kernel->n_values.begin(), kernel->n_values.end(), n) != kernel->n_values.end(),
              "sparseditto::spmm: n = ", n, " is not among the n values the kernel was prepared for (",
              c10::IntArrayRef(kernel->n_values), ")");
  return n;
}

// [n, M] with strides (1, n): the transpose of the kernel's M x n row-major C.
at::Tensor TransposedOutput(const at::Tensor& x, int64_t n, int64_t out_features) {
  return at::empty({out_features, n}, x.options()).t();
}

#ifdef SPARSEDITTO_CPP_META
at::Tensor SpmmMeta(const at::Tensor& x, int64_t handle, int64_t out_features) {
  (void)handle;  // the meta kernel runs where no kernel is prepared (tracing); shapes only
  return TransposedOutput(x, CheckSpmm(x, nullptr, out_features), out_features);
}
at::Tensor SpmmNkMeta(const at::Tensor& x, int64_t handle, int64_t out_features) {
  (void)handle;
  return at::empty({CheckSpmm(x, nullptr, out_features), out_features}, x.options());
}
#endif

at::Tensor SpmmCpu(const at::Tensor& x, int64_t handle, int64_t out_features) {
  (void)x, (void)handle, (void)out_features;
  TORCH_CHECK(false, "sparseditto::spmm runs on CUDA tensors only (the kernels are CUDA); x is on the CPU");
}

#ifdef SPARSEDITTO_WITH_CUDA
at::Tensor SpmmCuda(const at::Tensor& x, int64_t handle, int64_t out_features) {
  std::shared_ptr<Kernel> kernel = Find(handle);
  const int64_t n = CheckSpmm(x, kernel.get(), out_features);
  TORCH_CHECK(x.device().index() == kernel->device, "sparseditto::spmm: x is on cuda:", x.device().index(),
              ", the kernel was prepared on cuda:", kernel->device);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor y = TransposedOutput(x, n, out_features);
  if (n == 0) return y;
  const at::Tensor b = x.t().contiguous();  // K x n row-major: no copy when x is column-major
  const at::Tensor c = y.t();               // M x n row-major, y's storage
  const int rc = kernel->run(kernel->state, b.data_ptr(), c.data_ptr(), n, at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(rc == 0, "sparseditto::spmm: ", kernel->name, " run returned ", rc, " at n = ", n);
  return y;
}

// NK: X and Y as PyTorch's Linear has them; nothing is transposed or copied (x.contiguous() is x
// itself for a contiguous activation).
at::Tensor SpmmNkCuda(const at::Tensor& x, int64_t handle, int64_t out_features) {
  std::shared_ptr<Kernel> kernel = Find(handle);
  const int64_t n = CheckSpmm(x, kernel.get(), out_features, SD_LAYOUT_NK);
  TORCH_CHECK(x.device().index() == kernel->device, "sparseditto::spmm_nk: x is on cuda:", x.device().index(),
              ", the kernel was prepared on cuda:", kernel->device);
  c10::cuda::CUDAGuard guard(x.device());
  at::Tensor y = at::empty({n, out_features}, x.options());
  if (n == 0) return y;
  const at::Tensor b = x.contiguous();  // X [n x K] row-major
  const int rc = kernel->run(kernel->state, b.data_ptr(), y.data_ptr(), n, at::cuda::getCurrentCUDAStream().stream());
  TORCH_CHECK(rc == 0, "sparseditto::spmm_nk: ", kernel->name, " run returned ", rc, " at n = ", n);
  return y;
}
#endif

}  // namespace

TORCH_LIBRARY(sparseditto, m) {
  m.def("prepare(str library, str symbol_prefix, int rows, int cols, Tensor row_offsets, Tensor col_indices, "
        "Tensor values, int[] n_values, int dtype, int[] pattern, float sparsity, int device, int layout=0) -> int",
        &Prepare);
  m.def("release(int handle) -> ()", &Release);
  m.def("spmm(Tensor x, int handle, int out_features) -> Tensor");
  m.def("spmm_nk(Tensor x, int handle, int out_features) -> Tensor");
}

TORCH_LIBRARY_IMPL(sparseditto, CPU, m) {
  m.impl("spmm", &SpmmCpu);
  m.impl("spmm_nk", &SpmmCpu);
}

#ifdef SPARSEDITTO_CPP_META
TORCH_LIBRARY_IMPL(sparseditto, Meta, m) {
  m.impl("spmm", &SpmmMeta);
  m.impl("spmm_nk", &SpmmNkMeta);
}
// Older torch (1.13) has no autograd fallthrough for meta tensors; spmm has no backward anyway.
TORCH_LIBRARY_IMPL(sparseditto, AutogradMeta, m) {
  m.impl("spmm", torch::CppFunction::makeFallthrough());
  m.impl("spmm_nk", torch::CppFunction::makeFallthrough());
}
#endif

#ifdef SPARSEDITTO_WITH_CUDA
TORCH_LIBRARY_IMPL(sparseditto, CUDA, m) {
  m.impl("spmm", &SpmmCuda);
  m.impl("spmm_nk", &SpmmNkCuda);
}
#endif
