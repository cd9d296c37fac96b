#include "bench/bench_partial.h"

#include <fstream>
#include <sstream>

#include "coordinator/search/run_artifacts.h"
#include "fmt/format.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "task/run_paths.h"

namespace sparseditto {
namespace {

absl::Status Bad(const std::filesystem::path& path, const std::string& why) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", path.string(), why));
}

}  // namespace

absl::StatusOr<std::filesystem::path> PartialResultsPath(const std::filesystem::path& out_dir,
                                                         const std::string& task) {
  return PathInside(out_dir, {"bench-partial", task + ".json"});
}

absl::StatusOr<std::vector<KeptEvaluation>> ReadPartialResults(const std::filesystem::path& path,
                                                               const std::string& task) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(fmt::format("{}: no such file", path.string()));
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad(path, "not JSON");
  if (!doc.is_object() || !doc.contains("task") || !doc["task"].is_string() || !doc.contains("evaluations") ||
      !doc["evaluations"].is_array()) {
    return Bad(path, "not a bench's kept evaluations (an object with \"task\" and \"evaluations\")");
  }
  if (doc["task"].get<std::string>() != task) {
    return Bad(path, fmt::format("kept for task '{}', not '{}'", doc["task"].get<std::string>(), task));
  }
  std::vector<KeptEvaluation> kept;
  for (size_t i = 0; i < doc["evaluations"].size(); ++i) {
    const nlohmann::json& e = doc["evaluations"][i];
    for (const char* field : {"seed", "source_hash"}) {
      if (!e.is_object() || !e.contains(field) || !e[field].is_string()) {
        return Bad(path, fmt::format("evaluation {}: no string \"{}\"", i, field));
      }
    }
    if (!e.contains("result") || !e["result"].is_object()) {
      return Bad(path, fmt::format("evaluation {}: no object \"result\"", i));
    }
    KeptEvaluation k;
    k.seed = e["seed"].get<std::string>();
    k.source_hash = e["source_hash"].get<std::string>();
    if (auto s = google::protobuf::util::JsonStringToMessage(e["result"].dump(), &k.result); !s.ok()) {
      return Bad(path, fmt::format("evaluation {}: result: {}", i, std::string(s.message())));
    }
    kept.push_back(std::move(k));
  }
  return kept;
}

absl::Status WritePartialResults(const std::filesystem::path& path, const std::string& task,
                                 const std::vector<KeptEvaluation>& kept) {
  nlohmann::ordered_json evaluations = nlohmann::ordered_json::array();
  google::protobuf::util::JsonPrintOptions print;
  print.preserve_proto_field_names = true;
  for (const KeptEvaluation& k : kept) {
    std::string result;
    if (auto s = google::protobuf::util::MessageToJsonString(k.result, &result, print); !s.ok()) {
      return absl::InternalError(fmt::format("{}: {}: {}", path.string(), k.seed, std::string(s.message())));
    }
    // Not thrown on: a result whose text is not valid UTF-8 (a compiler's bytes) is an error here.
    nlohmann::ordered_json parsed = nlohmann::ordered_json::parse(result, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) {
      return absl::InternalError(fmt::format("{}: {}: the result's JSON does not parse", path.string(), k.seed));
    }
    evaluations.push_back({{"seed", k.seed}, {"source_hash", k.source_hash}, {"result", std::move(parsed)}});
  }
  const nlohmann::ordered_json doc = {{"task", task}, {"evaluations", evaluations}};
  const std::string text = doc.dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  return WriteFileAtomically(path.string(), text);
}

}  // namespace sparseditto
