#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "common/dtype.h"
#include "task/task_loader.h"
#include "task/task_names.h"

namespace sparseditto {

void RegisterValidateCommand(CLI::App& app, int* exit_code) {
  auto paths = std::make_shared<std::vector<std::string>>();
  CLI::App* cmd = app.add_subcommand("validate", "Load and validate task files; report the first error of each");
  cmd->add_option("files", *paths, "Task files (YAML)")->required();
  cmd->callback([paths, exit_code] {
    *exit_code = kExitSuccess;
    for (const std::string& path : *paths) {
      auto batch = LoadTaskFile(path);
      if (!batch.ok()) {
        std::cerr << "sparseditto validate: " << batch.status().message() << "\n";
        *exit_code = kExitFailure;
        continue;
      }
      std::cout << path << ": ok, " << batch->tasks_size() << (batch->tasks_size() == 1 ? " task" : " tasks");
      for (const auto& task : batch->tasks()) {
        std::cout << "\n  " << task.name() << ": spmm " << DtypeName(task.dtype()) << ", "
                  << PatternFamilyName(task.pattern().family()) << ", n=[";
        for (int i = 0; i < task.n_size(); ++i) std::cout << (i ? "," : "") << task.n(i);
        std::cout << "]";
        if (task.layout() != v1::LAYOUT_KN) std::cout << ", layout " << LayoutName(task.layout());
      }
      std::cout << "\n";
    }
  });
}

}  // namespace sparseditto
