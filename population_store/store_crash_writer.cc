// The child of the kill -9 test (population_store_crash_test.cc): writes the crash workload from write
// FIRST on, and after each write is acknowledged by the store sends its number (8 bytes) down ACK_FD.
// It runs until killed.
//   population_store_crash_writer STORE FIRST ACK_FD
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common/status_format.h"
#include "population_store/population_store.h"
#include "population_store/store_crash_workload.h"

namespace {

using namespace sparseditto;
using namespace sparseditto::store_testing;

int Fail(const absl::Status& status) {
  fmt::print(stderr, "population_store_crash_writer: {}\n", status.message());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    fmt::print(stderr, "usage: population_store_crash_writer STORE FIRST ACK_FD\n");
    return 2;
  }
  const int64_t first = std::strtoll(argv[2], nullptr, 10);
  const int ack_fd = std::atoi(argv[3]);
  PopulationStoreOptions options;
  options.memtable_bytes = kCrashMemtableBytes;
  auto store = PopulationStore::Open(argv[1], options);
  if (!store.ok()) return Fail(store.status());
  for (int64_t i = first;; ++i) {
    // Candidate i may be stored already: the previous writer was killed between its two writes.
    if (absl::Status s = (*store)->PutCandidate(kCrashRun, CrashCandidate(i)); !s.ok()) return Fail(s);
    if (absl::Status s = (*store)->CommitEvaluation(kCrashRun, CrashEvaluation(i), CrashRunState(i));
        !s.ok()) {
      return Fail(s);
    }
    // Acknowledged: tell the parent. 8 bytes are below PIPE_BUF, so the write is never split.
    if (write(ack_fd, &i, sizeof i) != static_cast<ssize_t>(sizeof i)) {
      fmt::print(stderr, "population_store_crash_writer: cannot acknowledge: {}\n", std::strerror(errno));
      return 1;
    }
  }
}
