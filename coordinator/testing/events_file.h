// Reading an events.jsonl (coordinator/search/search_events.h) back in a test (test code only): every
// line parsed, a line that does not parse failing the test, and the events counted by type.
#pragma once

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace sparseditto::testing {

// Every line of `path`, each parsed; a line that does not parse fails the test (and is left out).
inline std::vector<nlohmann::json> ReadEvents(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::vector<nlohmann::json> events;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(event.is_discarded()) << path << ":" << number << " does not parse: " << line;
    if (!event.is_discarded()) events.push_back(std::move(event));
  }
  return events;
}

// How many events of each "type".
inline std::map<std::string, int> CountByType(const std::vector<nlohmann::json>& events) {
  std::map<std::string, int> counts;
  for (const nlohmann::json& e : events) ++counts[e.value("type", "")];
  return counts;
}

}  // namespace sparseditto::testing
