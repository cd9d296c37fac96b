#include "evaluator/compile/static_screen.h"

#include <fstream>
#include <random>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace sparseditto {
namespace {

using ::testing::HasSubstr;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Realistic candidate code that must pass: cooperative groups, fp16, mma.sync and ldmatrix in device
// functions, asm behind __CUDA_ARCH__ in a __host__ __device__ helper, an asm macro used in device
// code, printf, reads with fopen "rb", tricky words in comments, strings and names.
constexpr char kTensorCoreCandidate[] = R"cu(// SpMM with mma.sync; "fork" in a comment is fine, so is system().
#include "sparseditto_kernel.h"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <mma.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>

namespace cg = cooperative_groups;
#define WARPS_PER_BLOCK 4  // sparseditto:tunable values=[2, 4, 8]
#define DEVICE_INLINE __device__ __forceinline__
#define SHFL_SYNC(v) asm volatile("shfl.sync.bfly.b32 %0, %0, 1, 0x1f, 0xffffffff;" : "+r"(v))
#define CUDA_TRY(call) do { cudaError_t e_ = (call); if (e_ != cudaSuccess) return 1; } while (0)

namespace {
constexpr int kTile = 1'024;
const char* kBanner = "no fork(), exec() or /proc here, only words";

DEVICE_INLINE void MmaM16N8K16(float* c, const uint32_t* a, const uint32_t* b) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

__device__ uint32_t LoadMatrix(const void* p) {
  uint32_t r;
  unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(p));
  __asm__ __volatile__("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r) : "r"(addr));
  SHFL_SYNC(r);
  return r;
}

__host__ __device__ inline unsigned LaneId() {
#ifdef __CUDA_ARCH__
  unsigned lane;
  asm("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
#else
  return 0;
#endif
}

struct Signal { int kill = 0; bool forked = false; };

template <typename T>
__global__ void __launch_bounds__(WARPS_PER_BLOCK * 32) SpmmKernel(const T* __restrict__ b, T* c, int n) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  __shared__ __half tile[kTile];
  float acc[4] = {0, 0, 0, 0};
  uint32_t a[4] = {0, 0, 0, 0}, bb[2] = {LoadMatrix(tile), 0};
  MmaM16N8K16(acc, a, bb);
  float total = cg::reduce(warp, acc[0], cg::plus<float>());
  if (threadIdx.x == 0 && n < 0) printf("lane %u total %f\n", LaneId(), total);
  block.sync();
}

struct State { int rows = 0; __half* values = nullptr; };
}  // namespace

SPARSEDITTO_EXPORT int sparseditto_prepare(const sd_problem* p, void** state, char* error, size_t cap) {
  State* s = new State;
  Signal signal_state;
  signal_state.kill = 1;
  std::vector<int> forked_rows(p->rows);
  FILE* f = fopen("weights.bin", "rb");
  if (f != nullptr) fclose(f);
  CUDA_TRY(cudaMalloc(&s->values, sizeof(__half) * (p->nnz > 0 ? p->nnz : 1)));
  if (cudaMemset(s->values, 0, sizeof(__half)) != cudaSuccess) {
    snprintf(error, cap, "prepare: %s", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  fprintf(stderr, "prepared %d rows (%s)\n", static_cast<int>(p->rows), kBanner);
  *state = s;
  return 0;
}

SPARSEDITTO_EXPORT int sparseditto_run(void* state, const void* b, void* c, int64_t n, cudaStream_t stream) {
  SpmmKernel<__half><<<1, WARPS_PER_BLOCK * 32, 0, stream>>>(static_cast<const __half*>(b),
                                                          static_cast<__half*>(c), static_cast<int>(n));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}

SPARSEDITTO_EXPORT void sparseditto_release(void* state) {
  State* s = static_cast<State*>(state);
  cudaFree(s->values);
  delete s;
}
)cu";

TEST(StaticScreen, ReferenceCandidatePasses) {
  const std::string source = ReadFile(SPARSEDITTO_SOURCE_DIR "/kernels/reference/csr_reference.cu");
  ASSERT_FALSE(source.empty());
  EXPECT_TRUE(ScreenCandidateSource(source).ok()) << ScreenCandidateSource(source);
}

TEST(StaticScreen, RealisticTensorCoreCandidatePasses) {
  EXPECT_TRUE(ScreenCandidateSource(kTensorCoreCandidate).ok()) << ScreenCandidateSource(kTensorCoreCandidate);
}

struct RefusedCase {
  std::string name;
  std::string source;
  int line;
  std::string words;
};
void PrintTo(const RefusedCase& c, std::ostream* os) { *os << c.name; }

class RefusedTest : public ::testing::TestWithParam<RefusedCase> {};

TEST_P(RefusedTest, NamesTheLineAndTheConstruct) {
  const RefusedCase& c = GetParam();
  const absl::Status status = ScreenCandidateSource(c.source);
  ASSERT_TRUE(absl::IsPermissionDenied(status)) << status;
  const std::vector<ScreenFinding> findings = FindScreenViolations(c.source);
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].line, c.line) << status;
  EXPECT_THAT(findings[0].message, HasSubstr(c.words));
  EXPECT_THAT(findings[0].message, HasSubstr("is not allowed in a candidate"));
  if (c.line > 0) {
    EXPECT_THAT(std::string(status.message()), HasSubstr("line " + std::to_string(c.line) + ": "));
  }
}

constexpr char kHead[] = "#include \"sparseditto_kernel.h\"\n#include <cstdio>\n";  // two lines
std::string WithHead(const std::string& body) { return kHead + body; }

INSTANTIATE_TEST_SUITE_P(
    StaticScreen, RefusedTest,
    ::testing::Values(
        RefusedCase{"fork", WithHead("static int Spawn() {\n  return fork();\n}\n"), 4, "call to fork() is not allowed in a candidate (process creation)"},
        RefusedCase{"execvp", WithHead("void F(char** a) { execvp(a[0], a); }\n"), 3, "call to execvp()"},
        RefusedCase{"system", WithHead("int F() {\n  return std::system(\"nvidia-smi\");\n}\n"), 4, "call to system()"},
        RefusedCase{"popen", WithHead("void F() { popen(\"ls\", \"r\"); }\n"), 3, "call to popen()"},
        RefusedCase{"fork_by_pointer", WithHead("auto spawn = &fork;\n"), 3, "use of fork"},
        RefusedCase{"kill_returned", WithHead("using Fn = int (*)(int, int);\nFn F() { return &kill; }\n"), 4, "use of kill"},
        RefusedCase{"environ_declared_extern", WithHead("extern \"C\" {\nextern char** environ;\n}\n"), 4, "use of environ"},
        RefusedCase{"dlsym", WithHead("void* F(void* h) {\n\n  return dlsym(h, \"cudaMalloc\");\n}\n"), 5, "call to dlsym() is not allowed in a candidate (dynamic loading"},
        RefusedCase{"dlopen", WithHead("void* h = dlopen(\"libcuda.so\", 2);\n"), 3, "call to dlopen()"},
        RefusedCase{"mprotect", WithHead("void F(void* p) { mprotect(p, 4096, 7); }\n"), 3, "call to mprotect()"},
        RefusedCase{"mmap_exec", WithHead("void* p = mmap(0, 4096, PROT_READ | PROT_EXEC, 0, -1, 0);\n"), 3, "call to mmap()"},
        RefusedCase{"prot_exec", WithHead("int prot = PROT_READ | PROT_EXEC;\n"), 3, "use of PROT_EXEC"},
        RefusedCase{"namespace_alias_of_std", WithHead("namespace s = std;\nint F() { return s::system(\"id\"); }\n"), 4, "call to system()"},
        RefusedCase{"alias_of_an_alias", WithHead("namespace a = ::std;\nnamespace b = a;\nint F() { return b::system(\"id\"); }\n"), 5, "call to system()"},
        RefusedCase{"using_std_in_own_namespace", WithHead("namespace mine { using namespace std; }\nint F() { return mine::system(\"id\"); }\n"), 4, "call to system()"},
        RefusedCase{"global_qualified_after_return", WithHead("int F() { return ::system(\"id\"); }\n"), 3, "call to system()"},
        RefusedCase{"using_global_popen", WithHead("namespace io { using ::popen; }\nnamespace p = io;\n"), 3, "use of popen"},
        RefusedCase{"alias_of_a_namespace_with_using", WithHead("namespace io { using ::popen; }\nnamespace p = io;\nvoid F() { p::popen(\"id\", \"r\"); }\n"), 3, "use of popen"},
        RefusedCase{"std_filesystem", WithHead("namespace fs = std::filesystem;\n"), 3, "use of filesystem"},
        RefusedCase{"wordexp", WithHead("void F(void* w) { wordexp(\"$(id)\", w, 0); }\n"), 3, "call to wordexp() is not allowed in a candidate (process creation)"},
        RefusedCase{"libc_internal", WithHead("extern \"C\" int __libc_system(const char*);\n"), 3, "call to __libc_system() is not allowed in a candidate (glibc"},
        RefusedCase{"std_thread", WithHead("void F() { std::thread t([] {}); t.detach(); }\n"), 3, "use of thread"},
        RefusedCase{"atexit", WithHead("void G();\nvoid F() { atexit(G); }\n"), 4, "call to atexit()"},
        RefusedCase{"line_directive", WithHead("#line 1 \"/usr/include/stdio.h\"\n"), 3, "#line directive"},
        RefusedCase{"gnu_line_marker", WithHead("# 1 \"/usr/include/stdio.h\" 3\n"), 3, "line marker"},
        RefusedCase{"environ_path", WithHead("const char* p = \"/proc/thread-self/environ\";\n"), 3, "reads of /proc"},
        RefusedCase{"environ_by_pid", WithHead("std::string p = std::string(\"/pr\") + \"oc/\" + std::to_string(1) + \"/environ\";\n"), 3, "reading the environment"},
        RefusedCase{"proc_without_slash", WithHead("std::string p = std::string(\"/proc\") + \"/self\";\n"), 3, "reads of /proc"},
        RefusedCase{"proc_string", WithHead("FILE* f = fopen(\"/proc/self/maps\", \"r\");\n"), 3, "reads of /proc"},
        RefusedCase{"proc_joined", WithHead("const char* p = \"/pr\" \"oc/self/mem\";\n"), 3, "reads of /proc"},
        RefusedCase{"socket", WithHead("int s = socket(2, 1, 0);\n"), 3, "call to socket() is not allowed in a candidate (network access)"},
        RefusedCase{"connect", WithHead("void F(int s) { connect(s, nullptr, 0); }\n"), 3, "call to connect()"},
        RefusedCase{"syscall", WithHead("long F() { return syscall(39); }\n"), 3, "call to syscall()"},
        RefusedCase{"signal", WithHead("void H(int) {}\nvoid F() { signal(11, H); }\n"), 4, "call to signal()"},
        RefusedCase{"sigaction", WithHead("struct sigaction sa;\n"), 3, "use of sigaction"},
        RefusedCase{"sigaction_forward", WithHead("struct sigaction;\n"), 3, "use of sigaction"},
        RefusedCase{"ptrace", WithHead("void F() { ptrace(0, 0, 0, 0); }\n"), 3, "call to ptrace()"},
        RefusedCase{"setrlimit", WithHead("void F(void* r) { setrlimit(0, r); }\n"), 3, "call to setrlimit()"},
        RefusedCase{"getenv", WithHead("const char* key = getenv(\"OPENAI_API_KEY\");\n"), 3, "call to getenv() is not allowed in a candidate (environment access)"},
        RefusedCase{"environ", WithHead("extern char** environ;\n"), 3, "use of environ"},
        RefusedCase{"kill", WithHead("void F() { kill(1, 9); }\n"), 3, "call to kill()"},
        RefusedCase{"fopen_write", WithHead("void F() { fopen(\"out.bin\", \"wb\"); }\n"), 3, "fopen() with mode \"wb\""},
        RefusedCase{"fopen_append", WithHead("void F() { fopen(\"log\", \"a+\"); }\n"), 3, "mode \"a+\""},
        RefusedCase{"fopen_variable_mode", WithHead("void F(const char* m) { fopen(\"x\", m); }\n"), 3, "not a string literal"},
        RefusedCase{"open_write", WithHead("void F() { open(\"x\", O_WRONLY | O_CREAT, 0644); }\n"), 3, "open() with flags other than"},
        RefusedCase{"open_numeric", WithHead("void F() { open(\"x\", 577, 0644); }\n"), 3, "open() with flags other than"},
        RefusedCase{"ofstream", WithHead("#include <fstream>\nvoid F() { std::ofstream out(\"x\"); }\n"), 4, "use of ofstream"},
        RefusedCase{"write_fd", WithHead("void F() { write(4, \"ok\", 2); }\n"), 3, "call to write()"},
        RefusedCase{"remove_path", WithHead("void F() { remove(\"/tmp/x\"); }\n"), 3, "call to remove()"},
        RefusedCase{"constructor", WithHead("__attribute__((constructor)) static void Early() {}\n"), 3, "attribute 'constructor'"},
        RefusedCase{"constructor_underscores", WithHead("static void __attribute__((__constructor__(101))) E() {}\n"), 3, "attribute 'constructor'"},
        RefusedCase{"gnu_destructor", WithHead("[[gnu::destructor]] void Late() {}\n"), 3, "attribute 'destructor'"},
        RefusedCase{"section", WithHead("__attribute__((section(\".init_array\"))) void* p = nullptr;\n"), 3, "attribute 'section'"},
        RefusedCase{"cuda_definition", WithHead("extern \"C\" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) {\n  *ms = 0.001f;\n  return cudaSuccess;\n}\n"), 3, "definition of cudaEventElapsedTime()"},
        RefusedCase{"driver_definition", WithHead("extern \"C\" int cuLaunchKernel(void* f) noexcept\n{\n  return 0;\n}\n"), 3, "definition of cuLaunchKernel()"},
        RefusedCase{"host_fn_with_default_argument_asm", WithHead("static int Host(int a = 1) {\n  asm(\"nop\");\n  return a;\n}\n"), 4, "inline asm outside a __device__ or __global__ function"},
        RefusedCase{"device_variable_initialiser_lambda_asm", WithHead("__device__ int g = [] { asm(\"nop\"); return 1; }();\n"), 3, "inline asm outside"},
        RefusedCase{"host_asm", WithHead("static int Host() {\n  int x;\n  asm(\"movl $1, %0\" : \"=r\"(x));\n  return x;\n}\n"), 5, "inline asm outside a __device__ or __global__ function"},
        RefusedCase{"file_scope_asm", WithHead("__asm__(\".globl evil\");\n"), 3, "inline asm outside"},
        RefusedCase{"host_device_asm", WithHead("__host__ __device__ int Both() {\n  int x;\n  asm(\"mov.u32 %0, 1;\" : \"=r\"(x));\n  return x;\n}\n"), 5, "outside #ifdef __CUDA_ARCH__"},
        RefusedCase{"asm_macro_in_host", WithHead("#define PAUSE() asm volatile(\"pause\")\nvoid F() { PAUSE(); }\n"), 4, "inline asm outside"},
        RefusedCase{"asm_in_host_else", WithHead("__host__ __device__ void F() {\n#ifdef __CUDA_ARCH__\n#else\n  asm(\"int3\");\n#endif\n}\n"), 6, "outside #ifdef __CUDA_ARCH__"},
        RefusedCase{"include_unistd", "#include <unistd.h>\n", 1, "#include <unistd.h> is not allowed in a candidate"},
        RefusedCase{"include_dlfcn", WithHead("#include <dlfcn.h>\n"), 3, "#include <dlfcn.h>"},
        RefusedCase{"include_socket", WithHead("  #  include <sys/socket.h>\n"), 3, "#include <sys/socket.h>"},
        RefusedCase{"include_mman", WithHead("#include <sys/mman.h>\n"), 3, "<sys/mman.h>"},
        RefusedCase{"include_ptrace", WithHead("#include <sys/ptrace.h>\n"), 3, "<sys/ptrace.h>"},
        RefusedCase{"include_signal", WithHead("#include <signal.h>\n"), 3, "<signal.h>"},
        RefusedCase{"include_link", WithHead("#include <link.h>\n"), 3, "<link.h>"},
        RefusedCase{"include_absolute", WithHead("#include </home/user/.ssh/id_rsa>\n"), 3, "include paths outside"},
        RefusedCase{"include_quoted", WithHead("#include \"../secrets.h\"\n"), 3, "only \"sparseditto_kernel.h\""},
        RefusedCase{"include_computed", WithHead("#define H <unistd.h>\n#include H\n"), 4, "computed #include"},
        RefusedCase{"token_pasting", WithHead("#define JOIN(a, b) a##b\nint F() { return JOIN(fo, rk)(); }\n"), 3, "token pasting (##)"},
        RefusedCase{"banned_in_macro", WithHead("#define SPAWN fork\n"), 3, "use of fork"},
        RefusedCase{"spliced_name", WithHead("int F() { return fo\\\nrk(); }\n"), 3, "call to fork()"},
        RefusedCase{"digraph_brace", WithHead("static int Host() <%\n  asm(\"nop\");\n  return 0;\n%>\n"), 4, "inline asm outside"}),
    [](const auto& info) { return info.param.name; });

struct PassingCase {
  std::string name;
  std::string source;
};
void PrintTo(const PassingCase& c, std::ostream* os) { *os << c.name; }

class PassingTest : public ::testing::TestWithParam<PassingCase> {};

TEST_P(PassingTest, IsNotRefused) {
  const absl::Status status = ScreenCandidateSource(GetParam().source);
  EXPECT_TRUE(status.ok()) << status;
}

INSTANTIATE_TEST_SUITE_P(
    StaticScreen, PassingTest,
    ::testing::Values(
        PassingCase{"variable_named_forked", "int forked = 0; bool exec_ok = true; int systems = 2;\n"},
        PassingCase{"fork_in_comment", "// never fork() here\n/* nor system(\"x\") */ int x;\n"},
        PassingCase{"fork_in_string", "const char* s = \"fork() and exec() and getenv()\";\n"},
        PassingCase{"fork_in_raw_string", "const char* s = R\"x(fork(); \" system())x\";\n"},
        PassingCase{"fork_in_char", "char c = 'f'; char q = '\\''; int big = 1'000'000;\n"},
        PassingCase{"shadowing_variables", "int kill = 0; bool signal; void H(int* write, const int& read) {}\nstd::vector<int> system; Foo* connect = nullptr;\n"},
        PassingCase{"member_access", "struct S { int kill; int signal; } s; int F(S* p) { return s.kill + p->signal; }\n"},
        PassingCase{"foreign_namespace", "auto policy = thrust::system::cuda::par;\n"},
        PassingCase{"alias_of_a_foreign_namespace", "namespace cg = cooperative_groups;\nnamespace th = thrust;\nauto p = th::system::cuda::par;\n"},
        PassingCase{"own_namespace_qualifier", "namespace mine { int K(); }\nint F() { return mine::kill(1); }\n"},
        PassingCase{"environment_in_prose", "const char* s = \"set the environment; see /usr/share\";\n"},
        PassingCase{"device_asm", "__device__ int F() { int x; asm(\"mov.u32 %0, 1;\" : \"=r\"(x)); return x; }\n"},
        PassingCase{"global_asm", "__global__ void K() { asm volatile(\"bar.sync 0;\"); }\n"},
        PassingCase{"asm_in_device_fn_with_default_argument",
                    "__device__ void Init(unsigned bar, unsigned count = 1) {\n  asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" ::\"r\"(bar), \"r\"(count));\n}\n"},
        PassingCase{"asm_in_device_operator_assign", "struct R {\n  int v;\n  __device__ R& operator=(int x) { asm(\"mov.u32 %0, %1;\" : \"=r\"(v) : \"r\"(x)); return *this; }\n};\n"},
        PassingCase{"asm_in_struct_device_method", "struct T {\n  __device__ void F() { asm(\"nop;\"); }\n};\n"},
        PassingCase{"asm_in_device_lambda_of_device_fn", "__device__ void F() { auto g = [] { asm(\"nop;\"); }; g(); }\n"},
        PassingCase{"asm_arch_guard", "__host__ __device__ void F() {\n#if __CUDA_ARCH__ >= 800\n  asm(\"nop;\");\n#endif\n}\n"},
        PassingCase{"asm_arch_defined", "__host__ __device__ void F() {\n#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900\n  asm(\"nop;\");\n#endif\n}\n"},
        PassingCase{"asm_ifndef_else", "__host__ __device__ void F() {\n#ifndef __CUDA_ARCH__\n  return;\n#else\n  asm(\"nop;\");\n#endif\n}\n"},
        PassingCase{"cuda_calls", "int F(void** p) { if (cudaMalloc(p, 16) != cudaSuccess) { return 1; } cudaFree(*p); return 0; }\n"},
        PassingCase{"cuda_call_then_block", "int F(void** p) {\n  while (cudaMalloc(p, 16) == cudaSuccess) {\n    cudaFree(*p);\n  }\n  return 0;\n}\n"},
        PassingCase{"cuda_declaration", "extern \"C\" cudaError_t cudaMalloc(void**, size_t);\n"},
        PassingCase{"helper_named_cuda_check", "static int cuda_check(int e) { return e; }\n"},
        PassingCase{"fopen_read", "void F() { FILE* f = fopen(\"x.bin\", \"r\" \"b\"); fclose(f); }\n"},
        PassingCase{"open_read", "void F() { open(\"x\", O_RDONLY | O_CLOEXEC); }\n"},
        PassingCase{"remove_algorithm", "void F(int* a, int* b) { std::remove(a, b, 0); }\n"},
        PassingCase{"pragma", "#pragma unroll 4\n#pragma nv_diag_suppress 177\n#pragma GCC optimize(\"O3\")\n"},
        PassingCase{"visibility_attribute", "extern \"C\" __attribute__((visibility(\"default\"))) int f() { return 0; }\n"},
        PassingCase{"include_cuda_headers", "#include <cuda/pipeline>\n#include <cuda/barrier>\n#include <cuda_pipeline.h>\n#include <cub/cub.cuh>\n"},
        PassingCase{"empty", ""}),
    [](const auto& info) { return info.param.name; });

TEST(StaticScreen, OversizeSourceIsRefused) {
  const std::string big(300 * 1024, ' ');
  const absl::Status status = ScreenCandidateSource(big);
  EXPECT_TRUE(absl::IsPermissionDenied(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("limit is 262144 bytes"));
  EXPECT_TRUE(ScreenCandidateSource(big, {.max_source_bytes = 400 * 1024}).ok());
}

TEST(StaticScreen, NulByteIsRefused) {
  const std::string source = std::string("int x;\nint y;") + '\0' + "int z;";
  const std::vector<ScreenFinding> findings = FindScreenViolations(source);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].line, 2);
  EXPECT_THAT(findings[0].message, HasSubstr("NUL byte"));
}

TEST(StaticScreen, ListsEveryFindingInLineOrderUpToTheCap) {
  std::string source;
  for (int i = 0; i < 30; ++i) source += "int f" + std::to_string(i) + "() { return fork(); }\n";
  EXPECT_EQ(FindScreenViolations(source).size(), 30u);
  const absl::Status status = ScreenCandidateSource(source, {.max_reported_findings = 3});
  EXPECT_EQ(std::string(status.message()),
            "line 1: call to fork() is not allowed in a candidate (process creation)\n"
            "line 2: call to fork() is not allowed in a candidate (process creation)\n"
            "line 3: call to fork() is not allowed in a candidate (process creation)\n"
            "... and 27 more");
}

// Half-written and garbage sources (what an LLM truncated mid-token) must never crash the screen.
TEST(StaticScreen, SurvivesEveryPrefixAndRandomBytes) {
  const std::string full = kTensorCoreCandidate;
  for (size_t n = 0; n <= full.size(); ++n) FindScreenViolations(std::string_view(full).substr(0, n));
  std::mt19937 rng(7);
  const std::string alphabet = "\"'\\/*#<>%:{}()[];R u8LxX0123456789asm_\n\r";
  for (int round = 0; round < 2000; ++round) {
    std::string junk(rng() % 64, ' ');
    for (char& c : junk) c = alphabet[rng() % alphabet.size()];
    FindScreenViolations(junk);
  }
}

}  // namespace
}  // namespace sparseditto
