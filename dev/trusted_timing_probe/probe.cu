// Lab probe (not product code): can a trusted process time work that another, untrusted process
// enqueues, precisely enough for 5 us kernels? The trusted judge brackets the untrusted host's work
// with its own stamps: its stream is held closed by a gate, then (flush L2), stamp t0, record an IPC
// event E_start; the host's stream waits E_start, runs the work, records E_done; the judge's stream
// waits E_done and stamps t1. The judge also checks that the host really waited (a marker the host's
// work writes must not appear while the gate is still closed).
//   nvcc -O2 -arch=sm_90 -o probe probe.cu && ./probe
#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %globaltimer;" : "=l"(t));
  return t;
}
__global__ void Gate(volatile int* flag) { while (*flag == 0) { __nanosleep(1000); } }
__global__ void Stamp(unsigned long long* out) { *out = GlobalTimer(); }
__global__ void Flush(int4* buf, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) buf[i].x += 1;
}
// Work: read `bytes` of src and write a checksum per block; stamps its own start/end into stamps[0..1].
__global__ void Work(const int4* src, size_t n, int* sink, int marker, int* marker_out,
                     unsigned long long* stamps) {
  if (blockIdx.x == 0 && threadIdx.x == 0 && stamps) stamps[0] = GlobalTimer();
  int acc = 0;
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc ^= src[i].y;
  if (acc == 0x7fffffff) sink[blockIdx.x] = acc;
  if (blockIdx.x == 0 && threadIdx.x == 0) *marker_out = marker;
  __syncthreads();
  if (blockIdx.x == 0 && threadIdx.x == 0 && stamps) stamps[1] = GlobalTimer();
}

struct Shared {
  cudaIpcMemHandle_t mem;
  cudaIpcEventHandle_t start, done;
};
struct Command { int trial; int kind; size_t bytes; };  // kind 0: null, 1: work; -1: exit

constexpr size_t kPool = size_t(1) << 30;  // the work's source (1 GiB) + marker + stamps at the end

double Median(std::vector<double> v) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[v.size() / 2]; }
double Pct(std::vector<double> v, double p) { std::sort(v.begin(), v.end()); return v.empty() ? 0 : v[size_t(p * (v.size() - 1))]; }

int Host(int in, int out) {
  Shared s;
  if (read(in, &s, sizeof s) != sizeof s) return 2;
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);
  CK(cudaSetDevice(0));
  void* pool;
  CK(cudaIpcOpenMemHandle(&pool, s.mem, cudaIpcMemLazyEnablePeerAccess));
  cudaEvent_t start, done;
  CK(cudaIpcOpenEventHandle(&start, s.start));
  CK(cudaIpcOpenEventHandle(&done, s.done));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  char* base = static_cast<char*>(pool);
  int* marker = reinterpret_cast<int*>(base + kPool - 4096);
  unsigned long long* stamps = reinterpret_cast<unsigned long long*>(base + kPool - 2048);
  int* sink = reinterpret_cast<int*>(base + kPool - 1024 * 1024);
  char ready = 1;
  if (write(out, &ready, 1) != 1) return 3;
  Command c;
  while (read(in, &c, sizeof c) == sizeof c && c.kind >= 0) {
    CK(cudaStreamWaitEvent(st, start, 0));
    if (c.kind == 1) Work<<<132 * 4, 512, 0, st>>>(reinterpret_cast<int4*>(base), c.bytes / 16, sink, c.trial, marker, stamps);
    CK(cudaEventRecord(done, st));
    char ok = 1;
    if (write(out, &ok, 1) != 1) return 3;
  }
  CK(cudaStreamSynchronize(st));
  return 0;
}

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--host") return Host(atoi(argv[2]), atoi(argv[3]));
  setvbuf(stdout, nullptr, _IONBF, 0);
  setenv("CUDA_MODULE_LOADING", "EAGER", 1);  // a lazy first launch behind the gate would wait for it
  CK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device %s, %d SMs, L2 %d MiB\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20);
  void* pool;
  CK(cudaMalloc(&pool, kPool));
  CK(cudaMemset(pool, 0, kPool));
  char* base = static_cast<char*>(pool);
  int* marker = reinterpret_cast<int*>(base + kPool - 4096);
  unsigned long long* host_stamps = reinterpret_cast<unsigned long long*>(base + kPool - 2048);
  int* sink = reinterpret_cast<int*>(base + kPool - 1024 * 1024);
  int4* flush_buf;
  const size_t flush_n = (size_t(256) << 20) / 16;
  CK(cudaMalloc(&flush_buf, flush_n * 16));
  unsigned long long* stamps;
  CK(cudaMalloc(&stamps, 64));
  int* flag;
  CK(cudaHostAlloc(&flag, 4, cudaHostAllocMapped));
  int* dflag;
  CK(cudaHostGetDevicePointer(&dflag, flag, 0));
  Shared s;
  CK(cudaIpcGetMemHandle(&s.mem, pool));
  cudaEvent_t start, done, ev0, ev1;
  CK(cudaEventCreateWithFlags(&start, cudaEventInterprocess | cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventInterprocess | cudaEventDisableTiming));
  CK(cudaEventCreate(&ev0));
  CK(cudaEventCreate(&ev1));
  CK(cudaIpcGetEventHandle(&s.start, start));
  CK(cudaIpcGetEventHandle(&s.done, done));
  cudaStream_t js, side;
  CK(cudaStreamCreateWithFlags(&js, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));

  int to_host[2], from_host[2];
  if (pipe(to_host) || pipe(from_host)) return 1;
  pid_t pid = fork();
  if (pid == 0) {
    std::string a = std::to_string(to_host[0]), b = std::to_string(from_host[1]);
    execl("/proc/self/exe", argv[0], "--host", a.c_str(), b.c_str(), (char*)nullptr);
    _exit(127);
  }
  if (write(to_host[1], &s, sizeof s) != sizeof s) return 1;
  // Warm every kernel once, gate open, so nothing loads behind a closed gate.
  *flag = 1;
  Gate<<<1, 1, 0, js>>>(dflag);
  Stamp<<<1, 1, 0, js>>>(stamps);
  Flush<<<132 * 4, 512, 0, js>>>(flush_buf, flush_n);
  Work<<<132 * 4, 512, 0, js>>>(reinterpret_cast<int4*>(base), 1024, sink, -1, marker, nullptr);
  CK(cudaStreamSynchronize(js));
  printf("judge warm\n");
  char ready;
  if (read(from_host[0], &ready, 1) != 1) return 1;
  printf("host ready\n");

  const size_t sizes[] = {0, size_t(4) << 20, size_t(16) << 20, size_t(64) << 20};
  const bool flushes[] = {false, true};
  int trial = 0, early = 0;
  for (bool flush : flushes) {
    for (size_t bytes : sizes) {
      std::vector<double> local_ev, remote_ev, remote_gt, inner_gt, switch_in, switch_out;
      for (int r = 0; r < 120; ++r) {
        ++trial;
        const bool remote_null = bytes == 0;
        // In-process reference: the judge runs the work itself (today's method).
        *flag = 0;
        Gate<<<1, 1, 0, js>>>(dflag);
        if (flush) Flush<<<132 * 4, 512, 0, js>>>(flush_buf, flush_n);
        CK(cudaEventRecord(ev0, js));
        if (!remote_null) Work<<<132 * 4, 512, 0, js>>>(reinterpret_cast<int4*>(base), bytes / 16, sink, -1, marker, nullptr);
        CK(cudaEventRecord(ev1, js));
        *reinterpret_cast<volatile int*>(flag) = 1;
        CK(cudaStreamSynchronize(js));
        float ms;
        CK(cudaEventElapsedTime(&ms, ev0, ev1));
        local_ev.push_back(ms * 1000);
        // Cross-process: bracketed by the judge.
        *flag = 0;
        Gate<<<1, 1, 0, js>>>(dflag);
        if (flush) Flush<<<132 * 4, 512, 0, js>>>(flush_buf, flush_n);
        Stamp<<<1, 1, 0, js>>>(stamps + 0);
        CK(cudaEventRecord(ev0, js));
        CK(cudaEventRecord(start, js));
        Command c{trial, bytes == 0 ? 0 : 1, bytes};
        char ok;
        if (write(to_host[1], &c, sizeof c) != sizeof c || read(from_host[0], &ok, 1) != 1) return 1;
        CK(cudaStreamWaitEvent(js, done, 0));
        CK(cudaEventRecord(ev1, js));
        Stamp<<<1, 1, 0, js>>>(stamps + 1);
        // Did the host wait for E_start? Its marker must not be there while the gate holds.
        std::this_thread::sleep_for(std::chrono::milliseconds(3));
        int seen = 0;
        CK(cudaMemcpyAsync(&seen, marker, 4, cudaMemcpyDeviceToHost, side));
        CK(cudaStreamSynchronize(side));
        if (bytes != 0 && seen == trial) ++early;
        *reinterpret_cast<volatile int*>(flag) = 1;
        CK(cudaStreamSynchronize(js));
        CK(cudaEventElapsedTime(&ms, ev0, ev1));
        unsigned long long t[2], h[2];
        CK(cudaMemcpy(t, stamps, 16, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(h, host_stamps, 16, cudaMemcpyDeviceToHost));
        remote_ev.push_back(ms * 1000);
        remote_gt.push_back((t[1] - t[0]) / 1000.0);
        if (bytes != 0) {
          inner_gt.push_back((h[1] - h[0]) / 1000.0);
          switch_in.push_back((double)(long long)(h[0] - t[0]) / 1000.0);
          switch_out.push_back((double)(long long)(t[1] - h[1]) / 1000.0);
        }
      }
      auto show = [](const char* what, const std::vector<double>& v) {
        if (v.empty()) return;
        printf("  %-28s median %8.2f us  p10 %8.2f  p90 %8.2f  min %8.2f max %8.2f\n", what, Median(v), Pct(v, 0.1),
               Pct(v, 0.9), Pct(v, 0), Pct(v, 1));
      };
      printf("work %zu MiB, flush %d:\n", bytes >> 20, flush);
      show("in-process events", local_ev);
      show("cross-process judge events", remote_ev);
      show("cross-process judge gtimer", remote_gt);
      show("host kernel own gtimer", inner_gt);
      show("switch in (t0 -> host start)", switch_in);
      show("switch out (host end -> t1)", switch_out);
    }
  }
  printf("host work seen before the gate opened: %d trials (0 = the host's wait on the IPC event held)\n", early);
  Command stop{0, -1, 0};
  if (write(to_host[1], &stop, sizeof stop) != sizeof stop) return 1;
  int status = 0;
  waitpid(pid, &status, 0);
  printf("host exit status %d\n", status);
  return 0;
}
