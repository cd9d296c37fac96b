#include <iostream>
#include <string>

#include "analyzer/pattern_analyzer.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/dtype.h"
#include "matrix/matrix_file.h"

namespace sparseditto {

void RegisterAnalyzeCommand(CLI::App& app, int* exit_code) {
  struct Options {
    std::string path;
    std::string dtype = "fp32";
    uint64_t seed = 1;
    bool compact = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Print the structural features of a matrix file (.smtx, .mtx, .npy) as JSON on stdout and a "
                 "one-line summary on stderr");
  cmd->add_option("file", options->path, "Matrix file")->required();
  cmd->add_option("--dtype", options->dtype, "Element type the values are rounded to")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}))
      ->capture_default_str();
  cmd->add_option("--seed", options->seed, "Seed of the values where the file has none")->capture_default_str();
  cmd->add_flag("--compact", options->compact, "One-line JSON");
  cmd->callback([options, exit_code] {
    auto dtype = ParseDtype(options->dtype);
    auto matrix = ReadMatrixFile(options->path, *dtype, options->seed);
    if (!matrix.ok()) {
      std::cerr << "sparseditto analyze: " << matrix.status().message() << "\n";
      *exit_code = kExitFailure;
      return;
    }
    const PatternFeatures features = AnalyzePattern(*matrix);
    nlohmann::json json = FeaturesToJson(features);
    json["file"] = options->path;
    std::cout << json.dump(options->compact ? -1 : 2) << "\n";
    std::cerr << FeaturesSummary(features) << "\n";
    *exit_code = kExitSuccess;
  });
}

}  // namespace sparseditto
