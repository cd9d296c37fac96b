// The on-disk cache of baseline timings (RunnerOptions.baseline_cache_dir): one BaselineTime per key
// of baseline_cache_key.h, so a baseline is timed once per (matrix, dtype, n, GPU, library).
//
// Layout: <dir>/<key>.pb (the serialized BaselineTime) and <dir>/<key>.sha256, the index entry:
// "<SHA-256 of the .pb's bytes> <key>\n". Both are written to a temporary file and renamed into
// place, .pb first, so a reader sees the old entry, a miss, or the whole new entry.
//
// Trust (DESIGN.md §3.6): only a process that never loads a candidate (the evaluator's baseline
// runner, or the trusted measuring process) may store entries, and every lookup checks the .pb
// against its index entry: a time changed on disk (a forged median, a flipped byte, a file from
// another key) is a miss with a warning, so the baseline is timed again, never used. An entry must
// also be plausible: its name set, and when available a finite median > 0.
//
// Thread-safe (stateless functions over the folder); concurrent stores of one key leave one whole
// entry or, in a rare interleaving, a mismatched pair that the next lookup reports and retimes.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "eval_result.pb.h"

namespace sparseditto::gpu {

// The cached timing of `key`, or nullopt when `dir` is empty, the entry is missing, unreadable, not
// plausible, or does not match its index entry. A mismatch or an implausible entry is reported in
// *warning when given, else on stderr ("sparseditto: warning: baseline cache entry ...").
std::optional<v1::BaselineTime> LookupCachedBaseline(const std::string& dir, const std::string& key,
                                                     std::string* warning = nullptr);

// Stores `value` under `key`, creating `dir` if needed. OK and nothing written when `dir` is empty.
// InvalidArgument for a key that is not lower-case hex (keys name files); Internal on I/O failure.
absl::Status StoreCachedBaseline(const std::string& dir, const std::string& key, const v1::BaselineTime& value);

}  // namespace sparseditto::gpu
