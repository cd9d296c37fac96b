// How the population store lays out its records in RocksDB: one column family per kind of record, and
// the keys of each. Internal to population_store/ (tests use it to damage a store on purpose).
//
// Keys join their parts with a NUL byte; run ids, task names and candidate ids never contain one
// (CheckId refuses them), so a prefix "run\0task\0" selects exactly one task's records. Sequence numbers
// are 8 bytes big-endian, so RocksDB's bytewise order is creation order. Values are serialized protos.
//
//   column family    key                                   value
//   meta             "format"                              "sparseditto.population_store"
//                    "schema_version"                      decimal, e.g. "1"
//                    "next_sequence"                       8-byte big-endian: the next candidate's sequence
//   runs             run                                   store::RunRecord
//   tasks            run \0 task                           v1::Task
//   candidates       run \0 candidate                      v1::Candidate
//   creation_order   run \0 task \0 sequence               candidate id
//   source_hashes    run \0 task \0 source_hash            candidate id (the first stored with that hash)
//   evaluations      run \0 candidate                      v1::EvalResult (the latest for the candidate)
//   lineage          run \0 parent \0 child's sequence     child candidate id
//   run_states       run \0 task                           store::RunState
//
// Candidate ids are unique within a run (not only within a task). RocksDB's "default" column family
// exists in every database and stays empty here.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"

namespace sparseditto::store_layout {

// What this build writes and reads. Bump on any incompatible change to the layout above.
inline constexpr int kSchemaVersion = 2;  // 2: RunState keeps the coordinator state alone (no copies)
inline constexpr std::string_view kFormatName = "sparseditto.population_store";

inline constexpr std::string_view kMetaFormatKey = "format";
inline constexpr std::string_view kMetaSchemaVersionKey = "schema_version";
inline constexpr std::string_view kMetaNextSequenceKey = "next_sequence";

// Indexes into kColumnFamilies.
enum ColumnFamily : int {
  kMeta = 0,
  kRuns,
  kTasks,
  kCandidates,
  kCreationOrder,
  kSourceHashes,
  kEvaluations,
  kLineage,
  kRunStates,
  kColumnFamilyCount,
};
inline constexpr std::array<std::string_view, kColumnFamilyCount> kColumnFamilies = {
    "meta",          "runs",        "tasks",   "candidates", "creation_order",
    "source_hashes", "evaluations", "lineage", "run_states",
};

// OK when `id` can be a key part: non-empty, at most 1024 bytes, no NUL byte. `what` names it in the
// InvalidArgument message ("run id", "task name", "candidate id").
absl::Status CheckId(std::string_view what, std::string_view id);

// Parts joined with NUL bytes: Key({"r", "t"}) == "r\0t".
std::string Key(std::initializer_list<std::string_view> parts);
// Key(parts) followed by a NUL byte: the prefix of every key that extends `parts`.
std::string Prefix(std::initializer_list<std::string_view> parts);

// 8 bytes, big-endian.
std::string EncodeSequence(uint64_t sequence);
// nullopt unless `bytes` is exactly 8 bytes.
std::optional<uint64_t> DecodeSequence(std::string_view bytes);

}  // namespace sparseditto::store_layout
