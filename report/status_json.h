// `sparseditto status RUN --json`: a run's facts (run_facts.h) as one JSON document, for programs.
//
// Schema "sparseditto.status/1" (a field is only ever added within a version; a change of meaning or a
// removal makes version 2):
//   schema            "sparseditto.status/1"
//   run               {id, dir, revision, created_unix_ms, provenance (the stored JSON object, or null
//                     when it does not parse), provenance_text (the stored text when it does not parse)}
//   tasks[]           one per task (a population "<task>@<arch>" is a task of its own):
//     name, population ({of, arch} or null), state ("pending" | "running" | "done" | "failed" |
//     "budget_exhausted"), state_detail, attempts, in_flight (candidate id or null), candidates (stored),
//     evaluations {done, max}, wall_seconds {spent, max (0: none)}, duplicates,
//     tokens {spent, max}, money_usd {spent, max}, over_budget (the budget that stopped it, or ""),
//     arch [..] (the task's), gpus [{gpu, evaluations}] (as the results name them),
//     outcomes {category: count} (categories: correct, slower, compile, wrong, crash, timeout,
//     rejected, internal, "not evaluated"),
//     best ({candidate_id, fitness} or null: none correct yet),
//     finalists {done, text, attempts [{candidate_id, passed, outcome, detail}]},
//     confirmation ({text, numbers} or null: the confirmation stage's words, when it ran, and its numbers
//       as coordinator/search/confirmation.h ConfirmationToJson writes them, when the run kept them)
//   errors[]          "task NAME: why" for each task that could not be read
// Text from the store (details, provenance) is untrusted; invalid UTF-8 is replaced by U+FFFD.
// Thread-safety: pure functions.
#pragma once

#include <string>

#include "nlohmann/json.hpp"
#include "report/run_facts.h"

namespace sparseditto::report {

inline constexpr const char* kStatusSchema = "sparseditto.status/1";

nlohmann::json StatusJson(const RunFacts& run);

// `json` as text (indented by `indent`, -1: one line); invalid UTF-8 in strings becomes U+FFFD instead
// of the exception nlohmann's dump would throw. Never throws.
std::string DumpJson(const nlohmann::json& json, int indent = 2);

}  // namespace sparseditto::report
