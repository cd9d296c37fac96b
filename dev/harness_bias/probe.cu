// Lab probe (not product code): why does the same cuBLAS call time about 0.9 us slower as a candidate (timed by
// the candidate host, evaluator/host/candidate_host_main.cc TimeBatch) than as the judge's baseline (timed by
// evaluator/runner/timing.cc TimeLaunches)? docs/results/suites_h100_2026-12-07.md measured it on 228 rows.
// Each mode times one cublasGemmEx (fp16, fp32 accumulate) of each shape, per-trial CUDA events, median of
// kRounds x kTrials trials:
//   judge      TimeLaunches' form: flush (memset of 2 x L2), synchronise, whole-GPU gate, event, GEMM, event, open
//   batch      TimeBatch's form in the same process: behind a gate, per trial memset flush, event, GEMM, event
//   host       TimeBatch's form in a second process (its own context), behind the judge's IPC start event, the
//              judge's stream waiting on the host's done event while the batch runs (the product's bracket)
//   host_idle  the same, but the judge's stream waits for nothing (it learns the batch ended over the pipe)
//   host_ipc   as host, the flush memset on the judge's buffer mapped over IPC (the product's flush)
//   judge_now  the judge since 589c558: whole-GPU gate, flush, event, GEMM, event, open, synchronise (one a trial)
//   batch_wide batch behind a whole-GPU gate instead of one block
// judge vs batch isolates the flush right before the trial and the batching; batch vs host the second context;
// host vs host_idle the judge's pending cross-context wait; host vs host_ipc the mapped flush buffer.
//   nvcc -O2 -std=c++17 -arch=sm_90 -o probe probe.cu -lcublas && ./probe
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)
#define CB(x) do { cublasStatus_t s_ = (x); if (s_ != CUBLAS_STATUS_SUCCESS) { \
  fprintf(stderr, "%s:%d %s: cublas %d\n", __FILE__, __LINE__, #x, int(s_)); exit(1); } } while (0)

constexpr int kTrials = 20, kRounds = 25;  // 500 trials a (shape, mode): the 0.65 ms hiccups came once in ~100 batches
struct Shape { int m, k, n; };
constexpr Shape kShapes[] = {{512, 512, 32}, {512, 512, 256}, {2048, 512, 128}, {4096, 4096, 16}, {4096, 4096, 2048}};
constexpr int kShapeCount = sizeof kShapes / sizeof kShapes[0];
struct Shared { cudaIpcMemHandle_t flush; cudaIpcEventHandle_t start, done; size_t flush_bytes; };
struct Command { int shape; int ipc_flush; };  // shape < 0: exit

__global__ void Gate(volatile int* flag) { while (*flag == 0) __nanosleep(500); }

// One GEMM's operands and handle, in the calling process's context.
struct Gemm {
  cublasHandle_t handle = nullptr;
  __half *a = nullptr, *b = nullptr, *c = nullptr;
  void* workspace = nullptr;
  Gemm() {
    size_t most = 0;
    for (const Shape& s : kShapes) most = std::max(most, size_t(s.m) * s.k + size_t(s.k) * s.n + size_t(s.m) * s.n);
    CK(cudaMalloc(&a, most * sizeof(__half)));
    CK(cudaMemset(a, 0x3c, most * sizeof(__half)));  // 1.0-ish halves, not zeros
    b = a, c = a;  // offsets set per shape in Run
    CK(cudaMalloc(&workspace, size_t(32) << 20));
    CB(cublasCreate(&handle));
  }
  void Run(const Shape& s, cudaStream_t st) {
    __half* bb = a + size_t(s.m) * s.k;
    __half* cc = bb + size_t(s.k) * s.n;
    const float one = 1, zero = 0;
    CB(cublasSetStream(handle, st));
    CB(cublasSetWorkspace(handle, workspace, size_t(32) << 20));
    // Row-major C[m x n] = A[m x k] B[k x n], as C^T = B^T A^T in cuBLAS's column-major terms.
    CB(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, bb, CUDA_R_16F, s.n, a, CUDA_R_16F, s.k,
                    &zero, cc, CUDA_R_16F, s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
};

double Median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
double Pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[size_t(p * (v.size() - 1))]; }

// TimeBatch's form: (wait on `start`), per trial memset flush, event, GEMM, event; `done` last. Returns when enqueued.
void EnqueueBatch(Gemm& g, const Shape& s, cudaStream_t st, cudaEvent_t start, cudaEvent_t done, void* flush,
                  size_t flush_bytes, std::vector<cudaEvent_t>& ev) {
  CK(cudaStreamWaitEvent(st, start, 0));
  for (int i = 0; i < kTrials; ++i) {
    CK(cudaMemsetAsync(flush, 0x5a, flush_bytes, st));
    CK(cudaEventRecord(ev[2 * i], st));
    g.Run(s, st);
    CK(cudaEventRecord(ev[2 * i + 1], st));
  }
  CK(cudaEventRecord(done, st));
}
void CollectBatch(const std::vector<cudaEvent_t>& ev, std::vector<double>* us) {
  for (int i = 0; i < kTrials; ++i) {
    float ms;
    CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    us->push_back(ms * 1000);
  }
}

int Host(int in, int out) {
  Shared sh;
  if (read(in, &sh, sizeof sh) != sizeof sh) return 2;
  CK(cudaSetDevice(0));
  void* ipc_flush;
  CK(cudaIpcOpenMemHandle(&ipc_flush, sh.flush, cudaIpcMemLazyEnablePeerAccess));
  void* own_flush;
  CK(cudaMalloc(&own_flush, sh.flush_bytes));
  cudaEvent_t start, done;
  CK(cudaIpcOpenEventHandle(&start, sh.start));
  CK(cudaIpcOpenEventHandle(&done, sh.done));
  std::vector<cudaEvent_t> ev(2 * kTrials);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  Gemm g;
  for (const Shape& s : kShapes) for (int w = 0; w < 3; ++w) g.Run(s, st);  // warm: no load behind a gate
  CK(cudaStreamSynchronize(st));
  char ready = 1;
  if (write(out, &ready, 1) != 1) return 3;
  Command c;
  while (read(in, &c, sizeof c) == sizeof c && c.shape >= 0) {
    EnqueueBatch(g, kShapes[c.shape], st, start, done, c.ipc_flush ? ipc_flush : own_flush, sh.flush_bytes, ev);
    char queued = 1;
    if (write(out, &queued, 1) != 1) return 3;
    CK(cudaStreamSynchronize(st));
    std::vector<double> us;
    CollectBatch(ev, &us);
    if (write(out, us.data(), us.size() * sizeof(double)) != ssize_t(us.size() * sizeof(double))) return 3;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--host") return Host(atoi(argv[2]), atoi(argv[3]));
  setvbuf(stdout, nullptr, _IONBF, 0);
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);  // inherited by the host: no lazy load behind a closed gate
  int to_host[2], from_host[2];
  if (pipe(to_host) || pipe(from_host)) return 1;
  const pid_t pid = fork();  // before any CUDA call in this process
  if (pid == 0) {
    close(to_host[1]), close(from_host[0]);  // so the host sees EOF when the judge exits
    std::string a = std::to_string(to_host[0]), b = std::to_string(from_host[1]);
    execl("/proc/self/exe", argv[0], "--host", a.c_str(), b.c_str(), (char*)nullptr);
    _exit(127);
  }
  close(to_host[0]), close(from_host[1]);
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  Shared sh;
  sh.flush_bytes = 2 * size_t(prop.l2CacheSize);
  printf("device %s, %d SMs, L2 %d MiB; flush %zu MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20,
         sh.flush_bytes >> 20);
  void* flush;
  CK(cudaMalloc(&flush, sh.flush_bytes));
  CK(cudaIpcGetMemHandle(&sh.flush, flush));
  cudaEvent_t start, done, ev0, ev1;
  CK(cudaEventCreateWithFlags(&start, cudaEventInterprocess | cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventInterprocess | cudaEventDisableTiming));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  CK(cudaIpcGetEventHandle(&sh.start, start));
  CK(cudaIpcGetEventHandle(&sh.done, done));
  int* flag;
  CK(cudaHostAlloc(&flag, 4, cudaHostAllocMapped));
  int* dflag;
  CK(cudaHostGetDevicePointer(&dflag, flag, 0));
  volatile int* vflag = flag;
  cudaStream_t js;
  CK(cudaStreamCreateWithFlags(&js, cudaStreamNonBlocking));
  std::vector<cudaEvent_t> ev(2 * kTrials);
  for (auto& e : ev) CK(cudaEventCreate(&e));
  Gemm g;
  *vflag = 1;
  Gate<<<1, 1, 0, js>>>(dflag);
  for (const Shape& s : kShapes) for (int w = 0; w < 3; ++w) g.Run(s, js);
  CK(cudaStreamSynchronize(js));
  if (write(to_host[1], &sh, sizeof sh) != sizeof sh) return 1;
  char byte;
  if (read(from_host[0], &byte, 1) != 1) return 1;

  printf("%-18s %-10s %9s %9s %9s %9s %s\n", "shape m x k x n", "mode", "median us", "p10", "p90", "max", "trials > 100 us + 2 x median");
  for (int si = 0; si < kShapeCount; ++si) {
    const Shape& s = kShapes[si];
    const char* modes[] = {"judge", "batch", "host", "host_idle", "host_ipc", "judge_now", "batch_wide"};
    for (int mode = 0; mode < 7; ++mode) {
      std::vector<double> us;
      for (int r = 0; r < kRounds; ++r) {
        if (mode == 0) {
          for (int i = 0; i < kTrials; ++i) {
            CK(cudaMemsetAsync(flush, 0x5a, sh.flush_bytes, js));
            CK(cudaStreamSynchronize(js));
            *vflag = 0;
            Gate<<<prop.multiProcessorCount * 2, 128, 0, js>>>(dflag);  // fills the GPU, as kWholeGpu
            CK(cudaEventRecord(ev0, js));
            g.Run(s, js);
            CK(cudaEventRecord(ev1, js));
            *vflag = 1;
            CK(cudaStreamSynchronize(js));
            float ms;
            CK(cudaEventElapsedTime(&ms, ev0, ev1));
            us.push_back(ms * 1000);
          }
        } else if (mode == 5) {  // the judge since 589c558: whole-GPU gate, then flush, event, GEMM, event
          for (int i = 0; i < kTrials; ++i) {
            *vflag = 0;
            Gate<<<prop.multiProcessorCount * 2, 128, 0, js>>>(dflag);
            CK(cudaMemsetAsync(flush, 0x5a, sh.flush_bytes, js));
            CK(cudaEventRecord(ev0, js));
            g.Run(s, js);
            CK(cudaEventRecord(ev1, js));
            *vflag = 1;
            CK(cudaStreamSynchronize(js));
            float ms;
            CK(cudaEventElapsedTime(&ms, ev0, ev1));
            us.push_back(ms * 1000);
          }
        } else if (mode == 6) {  // batch behind a whole-GPU gate (not one block)
          *vflag = 0;
          Gate<<<prop.multiProcessorCount * 2, 128, 0, js>>>(dflag);
          CK(cudaEventRecord(start, js));
          EnqueueBatch(g, s, js, start, done, flush, sh.flush_bytes, ev);
          *vflag = 1;
          CK(cudaStreamSynchronize(js));
          CollectBatch(ev, &us);
        } else if (mode == 1) {
          *vflag = 0;
          Gate<<<1, 1, 0, js>>>(dflag);
          CK(cudaEventRecord(start, js));
          EnqueueBatch(g, s, js, start, done, flush, sh.flush_bytes, ev);
          *vflag = 1;
          CK(cudaStreamSynchronize(js));
          CollectBatch(ev, &us);
        } else {
          *vflag = 0;
          Gate<<<1, 1, 0, js>>>(dflag);
          CK(cudaEventRecord(start, js));
          Command c{si, mode == 4};
          if (write(to_host[1], &c, sizeof c) != sizeof c || read(from_host[0], &byte, 1) != 1) return 1;
          if (mode != 3) CK(cudaStreamWaitEvent(js, done, 0));  // the bracket's pending wait
          *vflag = 1;
          std::vector<double> got(kTrials);
          if (read(from_host[0], got.data(), kTrials * sizeof(double)) != ssize_t(kTrials * sizeof(double))) return 1;
          CK(cudaStreamSynchronize(js));
          us.insert(us.end(), got.begin(), got.end());
        }
      }
      char label[32];
      snprintf(label, sizeof label, "%d x %d x %d", s.m, s.k, s.n);
      const double median = Median(us);
      const long hiccups = std::count_if(us.begin(), us.end(), [&](double t) { return t > 100 + 2 * median; });
      printf("%-18s %-10s %9.2f %9.2f %9.2f %9.2f %ld\n", label, modes[mode], median, Pct(us, 0.1), Pct(us, 0.9),
             Pct(us, 1), hiccups);
    }
  }
  Command stop{-1, 0};
  if (write(to_host[1], &stop, sizeof stop) != sizeof stop) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("host exit status %d\n", status);
  return 0;
}
