// What the capacity test (capacity_bench.cc) measures with, beyond its two halves: latency percentiles,
// this process's CPU time, memory and threads (/proc/self, getrusage), and the TCP connections to a
// port (/proc/net/tcp), so that "one connection per simulated evaluator" is checked, not assumed.
// Thread-safety: pure functions over their arguments and the kernel's files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sparseditto {

struct LatencySummary {
  int64_t count = 0;
  double p50_ms = 0;
  double p99_ms = 0;
  double max_ms = 0;
};

// The samples' percentiles (nearest rank); zeros for none.
LatencySummary Summarize(std::vector<double> samples_ms);

// This process's /proc/self/status field `key` ("VmRSS", "VmHWM", "Threads") as a number (kB for the
// memory ones); -1 when absent.
int64_t ProcStatusField(const std::string& key);

// User + system CPU seconds of this process so far.
double ProcessCpuSeconds();

// Established TCP connections on this machine whose remote end is port `port` (/proc/net/tcp and tcp6):
// the client sides of the connections to a server listening there.
int ConnectionsTo(int port);

}  // namespace sparseditto
