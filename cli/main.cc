// sparseditto: one binary, one subcommand per job. Exit codes in cli/exit_codes.h.
#include <filesystem>
#include <iostream>
#include <system_error>

#include "CLI/CLI.hpp"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/logging.h"
#include "common/owned_temp_folders.h"
#include "revision.h"  // SPARSEDITTO_REVISION, written at every build by cli/write_revision.cmake

int main(int argc, char** argv) {
  using namespace sparseditto;
  // What an earlier sparseditto killed mid-compile (kill -9, Ctrl-C) and its children left behind.
  std::error_code no_temp_folder;
  const std::filesystem::path temp = std::filesystem::temp_directory_path(no_temp_folder);
  if (!no_temp_folder) (void)SweepOrphanedTempFolders(temp);
  (void)SetUpLogging("info", "");  // stderr, plain lines; search and coordinator set their options
  CLI::App app{"SparseDitto: search for fast, verified CUDA SpMM kernels specialised to a sparsity pattern"};
  app.set_version_flag("--version", "sparseditto " SPARSEDITTO_VERSION " (revision " SPARSEDITTO_REVISION ")");
  app.require_subcommand(1);
  int exit_code = kExitSuccess;
  RegisterAnalyzeCommand(app, &exit_code);
  RegisterValidateCommand(app, &exit_code);
  RegisterEvalCommand(app, &exit_code);
  RegisterBenchCommand(app, &exit_code);
  RegisterSearchCommand(app, &exit_code);
  RegisterCoordinatorCommand(app, &exit_code);
  RegisterClientCommand(app, &exit_code);
  RegisterMutatorCommand(app, &exit_code);
  RegisterEvaluatorCommand(app, &exit_code);
  RegisterBenchMutatorsCommand(app, &exit_code);
  RegisterBenchSearchCommand(app, &exit_code);
  RegisterStatusCommand(app, &exit_code);
  RegisterReportCommand(app, &exit_code);
  RegisterExportCommand(app, &exit_code);
  RegisterDoctorCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return exit_code;
}
