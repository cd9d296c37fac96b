// Lab header (not product code): the flushed-launch timing the dev/ probes share (stream_plan/split_probe.cu,
// u24_plan/plan_probe.cu, harness_bias/floor.cu): a trial is a memset of the flush buffer (2 x L2), an event, the
// launch, an event and a synchronise; the first `warmups` trials are dropped, the rest give median, p10 and p90.
// Include it by its relative path ("../probe_timing.h"), so a probe builds with nvcc from any directory.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <vector>

struct FlushedTiming { float median_us = 0, p10_us = 0, p90_us = 0; };

// `launch` enqueues the work on the default stream and returns false when it failed to. False, after printing the
// step, on any CUDA error or a failed launch; `*out` is then unchanged.
template <typename Launch>
bool TimeFlushed(Launch launch, void* flush, size_t flush_bytes, int warmups, int trials, FlushedTiming* out) {
  cudaEvent_t e0, e1;
  if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) return printf("TimeFlushed: cudaEventCreate failed\n"), false;
  std::vector<float> us;
  bool ok = true;
  for (int t = 0; ok && t < warmups + trials; ++t) {
    float ms = 0;
    const char* step = cudaMemsetAsync(flush, 0x5a, flush_bytes) != cudaSuccess ? "the flush"
                       : cudaEventRecord(e0) != cudaSuccess                       ? "the start event"
                       : !launch() || cudaGetLastError() != cudaSuccess          ? "the launch"
                       : cudaEventRecord(e1) != cudaSuccess || cudaEventSynchronize(e1) != cudaSuccess ? "the end event"
                       : cudaEventElapsedTime(&ms, e0, e1) != cudaSuccess        ? "the elapsed time"
                                                                                   : nullptr;
    if (step != nullptr) ok = false, printf("TimeFlushed: %s failed: %s\n", step, cudaGetErrorString(cudaGetLastError()));
    if (ok && t >= warmups) us.push_back(ms * 1000);
  }
  cudaEventDestroy(e0), cudaEventDestroy(e1);
  if (!ok || us.empty()) return false;
  std::sort(us.begin(), us.end());
  *out = {us[us.size() / 2], us[us.size() / 10], us[us.size() * 9 / 10]};
  return true;
}
