// The wall clock as the search records it (RunRecord.created_unix_ms, RunState.updated_unix_ms).
// Thread-safe.
#pragma once

#include <chrono>
#include <cstdint>

namespace sparseditto {

inline int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace sparseditto
