#include "coordinator/server/load_measures.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace sparseditto {

LatencySummary Summarize(std::vector<double> samples_ms) {
  LatencySummary s;
  s.count = static_cast<int64_t>(samples_ms.size());
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  auto at = [&](double q) {
    return samples_ms[std::min(samples_ms.size() - 1, static_cast<size_t>(q * static_cast<double>(samples_ms.size())))];
  };
  s.p50_ms = at(0.5);
  s.p99_ms = at(0.99);
  s.max_ms = samples_ms.back();
  return s;
}

int64_t ProcStatusField(const std::string& key) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      return std::stoll(line.substr(key.size() + 1));
    }
  }
  return -1;
}

double ProcessCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

int ConnectionsTo(int port) {
  int connections = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // the header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      const size_t colon = remote.rfind(':');
      if (state != "01" || colon == std::string::npos) continue;  // 01: ESTABLISHED
      if (std::stoi(remote.substr(colon + 1), nullptr, 16) == port) ++connections;
    }
  }
  return connections;
}

}  // namespace sparseditto
